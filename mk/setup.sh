#!/usr/bin/env bash
# The steps of `make setup` (mk/setup.mk). Each installs only what is missing,
# says what it installs, and prints one line when there is nothing to do.
#
#   mk/setup.sh apt PKG...                  Debian packages (a package counts as present
#                                           when dpkg has it or, for the few listed in
#                                           `present` below, when its command is on PATH)
#   mk/setup.sh go GO MIN_MINOR             Go >= 1.MIN_MINOR (Debian's golang-go if none)
#   mk/setup.sh rustup COMPONENT...         rustup components (and targets: target:NAME)
#   mk/setup.sh cargo-tool NAME VERSION     `cargo install NAME --version VERSION --locked`
#   mk/setup.sh venv DIR PYTHON REQ...      a venv at DIR made by PYTHON, with `pip install -r REQ`
#
# Environment: SETUP_SYSTEM=skip skips the apt step (the packages are then the
# user's business); CARGO (default cargo).
set -euo pipefail

say() { echo "setup: $*"; }
die() {
  echo "setup: $*" >&2
  exit 1
}

dpkg_has() {
  command -v dpkg-query >/dev/null 2>&1 &&
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# Whether PKG is there. dpkg first; then, for packages whose command may come
# from elsewhere (NodeSource's nodejs carries npm, and Debian's npm package
# conflicts with it; pyenv's python has venv; a compiler from another vendor),
# the command the suites use.
present() {
  dpkg_has "$1" && return 0
  case $1 in
    gcc) command -v cc ;;
    g++) command -v c++ ;;
    pkgconf | pkg-config) command -v pkg-config ;;
    binutils) command -v readelf ;;
    nodejs) command -v node ;;
    python3) command -v python3 ;;
    python3-venv) python3 -c 'import ensurepip, venv' ;;
    mingw-w64) command -v x86_64-w64-mingw32-gcc ;;
    wine64) command -v wine64 || [ -x /usr/lib/wine/wine64 ] ;;
    abigail-tools) command -v abidiff ;;
    golang-go) command -v go ;;
    make | cmake | valgrind | clang | npm) command -v "$1" ;;
    *) false ;;
  esac >/dev/null 2>&1
}

# Installs the packages given, as root, with sudo, or says what to run.
apt_install() {
  local cmd=(apt-get install -y -q -o DPkg::Lock::Timeout=600 "$@")
  local update=(apt-get update -q -o DPkg::Lock::Timeout=600)
  local sudo=()
  if ! command -v apt-get >/dev/null 2>&1; then
    say "WARNING: no apt-get (not Debian/Ubuntu): install the equivalents of: $*"
    say "WARNING: continuing; the suites that need them will fail"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && { [ -t 0 ] || sudo -n true 2>/dev/null; }; then
      # Asks for a password only with a terminal to ask on.
      if [ -t 0 ]; then sudo=(sudo); else sudo=(sudo -n); fi
    else
      die "missing Debian packages: $*
setup: run this (as root), then run make again:
    apt-get update && apt-get install -y $*
setup: (or SETUP_SYSTEM=skip to go on without them)"
    fi
  fi
  say "installing Debian packages: $* (${sudo[*]:-as root}: apt-get install)"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" "${update[@]}"
  "${sudo[@]}" "${cmd[@]}"
}

step_apt() {
  if [ "${SETUP_SYSTEM:-}" = skip ]; then
    say "system packages skipped (SETUP_SYSTEM=skip): $*"
    return 0
  fi
  local missing=() p
  for p in "$@"; do present "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -eq 0 ]; then
    say "Debian packages present ($#): $*"
    return 0
  fi
  apt_install "${missing[@]}"
  local still=()
  for p in "${missing[@]}"; do present "$p" || still+=("$p"); done
  [ ${#still[@]} -eq 0 ] || die "still missing after apt-get install: ${still[*]}"
}

step_go() {
  local go=$1 min=$2 version minor
  if ! command -v "$go" >/dev/null 2>&1; then
    [ "${SETUP_SYSTEM:-}" = skip ] || apt_install golang-go
    go=$(command -v go || true)
    [ -n "$go" ] || die "bindings/go needs Go >= 1.$min: none found (set GO=/path/to/go)"
  fi
  version=$(GOTOOLCHAIN=local "$go" env GOVERSION)
  minor=$(sed -E 's/^go1\.([0-9]+).*/\1/' <<<"$version")
  if ! [ "$minor" -ge "$min" ] 2>/dev/null; then
    die "bindings/go needs Go >= 1.$min; $go is $version. Install a newer Go (https://go.dev/dl, or your distribution's backports) and put it on PATH, or set GO=/path/to/go"
  fi
  say "Go present: $version ($go)"
}

step_rustup() {
  local want=("$@") missing_c=() missing_t=() item
  if ! command -v rustup >/dev/null 2>&1; then
    # cargo from elsewhere: the components must be there already.
    cargo clippy --version >/dev/null 2>&1 && cargo fmt --version >/dev/null 2>&1 ||
      die "no rustup, and cargo clippy / cargo fmt are missing: install Rust with rustup (https://rustup.rs)"
    say "Rust components present (no rustup): clippy, rustfmt"
    return 0
  fi
  local components targets
  components=$(rustup component list --installed)
  targets=$(rustup target list --installed)
  for item in "${want[@]}"; do
    case $item in
      target:*) grep -qx "${item#target:}" <<<"$targets" || missing_t+=("${item#target:}") ;;
      *) grep -q "^$item\(-\|$\)" <<<"$components" || missing_c+=("$item") ;;
    esac
  done
  if [ ${#missing_c[@]} -gt 0 ]; then
    say "installing Rust components: ${missing_c[*]} (rustup component add)"
    rustup component add "${missing_c[@]}"
  fi
  if [ ${#missing_t[@]} -gt 0 ]; then
    say "installing Rust targets: ${missing_t[*]} (rustup target add)"
    rustup target add "${missing_t[@]}"
  fi
  if [ ${#missing_c[@]} -eq 0 ] && [ ${#missing_t[@]} -eq 0 ]; then
    say "Rust components present: ${want[*]}"
  fi
}

step_cargo_tool() {
  local name=$1 version=$2 cargo=${CARGO:-cargo}
  if "$cargo" install --list | grep -qx "$name v$version:"; then
    say "$name $version present"
    return 0
  fi
  say "installing $name $version (cargo install --locked, from crates.io)"
  "$cargo" install "$name" --version "$version" --locked
}

step_venv() {
  local dir=$1 python=$2
  shift 2
  local args=() req
  for req in "$@"; do args+=(-r "$req"); done
  if [ ! -x "$dir/bin/python" ]; then
    command -v "$python" >/dev/null 2>&1 || die "no $python to make the venv $dir with (set SETUP_PYTHON)"
    say "creating the Python venv $dir ($("$python" --version 2>&1), $(command -v "$python"))"
    "$python" -m venv "$dir" || die "$python -m venv failed: on Debian/Ubuntu install python3-venv"
  fi
  say "installing into $dir: $(grep -hv '^\s*\(#\|-\|$\)' "$@" | tr '\n' ' ')(pip install ${args[*]})"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "${args[@]}"
}

step=${1:-}
[ $# -gt 0 ] && shift
case $step in
  apt) step_apt "$@" ;;
  go) step_go "$@" ;;
  rustup) step_rustup "$@" ;;
  cargo-tool) step_cargo_tool "$@" ;;
  venv) step_venv "$@" ;;
  *) die "usage: mk/setup.sh apt|go|rustup|cargo-tool|venv ARGS... (see its header)" ;;
esac
