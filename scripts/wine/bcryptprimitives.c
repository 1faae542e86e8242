/* Wine 8 (Debian 12's) lacks bcryptprimitives.dll, where Rust's standard library takes
 * its random bytes from (ProcessPrng) on Windows. This stand-in gives them from
 * RtlGenRandom, so that the unit tests compiled for Windows run under Wine. It is built
 * by scripts/check-other-desktops.sh into the Wine prefix it makes; it never ships. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!RtlGenRandom(data, chunk)) {
      return FALSE;
    }
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
