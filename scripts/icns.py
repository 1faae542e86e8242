#!/usr/bin/env python3
"""Writes a macOS .icns icon from PNG files: `icns.py OUT 16=a.png 32=b.png ...`.

An .icns file is the magic `icns`, its total length, then one entry per size: a
four-letter type, the entry's length (with its 8-byte header) and the PNG itself
(every type used here holds PNG data, which macOS 10.7 and later read).
"""
import struct
import sys

# The type of each size's entry (Apple's icns types that take PNG data).
TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09", 1024: b"ic10"}


def main() -> None:
    out, pairs = sys.argv[1], sys.argv[2:]
    entries = b""
    for pair in pairs:
        size, path = pair.split("=", 1)
        data = open(path, "rb").read()
        if not data.startswith(b"\x89PNG\r\n\x1a\n"):
            sys.exit(f"{path} is not a PNG")
        entries += TYPES[int(size)] + struct.pack(">I", 8 + len(data)) + data
    with open(out, "wb") as file:
        file.write(b"icns" + struct.pack(">I", 8 + len(entries)) + entries)


if __name__ == "__main__":
    main()
