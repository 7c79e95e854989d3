# Sourced by the install and wheel checks: count passed checks, stop at the
# first failure, read a zip member (needs $python; no unzip needed).
passed=0

pass() {
  echo "ok: $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $1" >&2
  exit 1
}
# A member of a zip file, to stdout.
member() {
  "$python" -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$1" "$2"
}
