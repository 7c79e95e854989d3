#!/usr/bin/env bash
# An aarch64 Python to run the manylinux aarch64 wheel under qemu-aarch64
# (dist-cross-test, issue 51 item 4): Debian's own arm64 packages of the
# python3.11 interpreter, its standard library and the libraries they and
# libcapstan load (glibc, libgcc_s, libffi for ctypes, zlib, expat), fetched
# by `apt-get download` through a private apt state for arm64 (the machine's
# own apt configuration and dpkg are not touched: no --add-architecture) and
# unpacked with dpkg-deb into ROOT, which `qemu-aarch64 -L ROOT` takes as the
# aarch64 file system. No package is installed; about 10 MB of downloads.
#
#   tools/dist/aarch64_python.sh ROOT     (then ROOT/usr/bin/python3.11)
set -euo pipefail
root=$1
[ -x "$root/usr/bin/python3.11" ] && exit 0
state=$(mktemp -d "${TMPDIR:-/tmp}/capstan-apt-arm64.XXXXXX")
trap 'rm -rf "$state"' EXIT
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/sources" "$state/debs"
touch "$state/status"
cp /etc/apt/sources.list.d/*.sources "$state/sources/" 2>/dev/null || true
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$state/sources/main.list"
apt_arm64=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Dir::State="$state"
  -o Dir::State::Lists="$state/lists" -o Dir::State::status="$state/status" -o Dir::Cache="$state/cache"
  -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$state/sources" -o APT::Sandbox::User=root)
echo "aarch64-python: apt-get update for arm64 (private state in $state)"
apt-get "${apt_arm64[@]}" update -qq
(cd "$state/debs" && apt-get "${apt_arm64[@]}" download -qq python3.11-minimal libpython3.11-minimal \
  libpython3.11-stdlib libc6 libgcc-s1 libffi8 zlib1g libexpat1)
mkdir -p "$root.part"
for deb in "$state"/debs/*.deb; do dpkg-deb -x "$deb" "$root.part"; done
rm -rf "$root" && mv "$root.part" "$root"
echo "aarch64-python: $root/usr/bin/python3.11 ($(ls "$state"/debs | tr '\n' ' '))"
