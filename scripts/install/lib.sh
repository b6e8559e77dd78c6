# Shared by the install scripts: cache locations, logging, root and apt helpers.
# Sourced, not run.

CACHE="${DOCSERVICE_CACHE:-$HOME/.cache/docservice}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

die() { echo "install: $*" >&2; exit 1; }
log() { echo "install: $*" >&2; }
# stdout carries one line per component: name, version, path.
report() { printf '%-22s %-12s %s\n' "$1" "$2" "$3"; }

# Runs a command as root (sudo -n never prompts: there is no stdin in CI).
as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

# Installs the Debian packages that are missing; `apt-get update` runs at most once.
APT_UPDATED=0
apt_install() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  command -v apt-get >/dev/null || die "apt-get not found; install these Debian packages: ${missing[*]}"
  log "installing Debian packages: ${missing[*]}"
  if [[ $APT_UPDATED -eq 0 ]]; then
    as_root apt-get update -q >&2
    APT_UPDATED=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# The version a wrapper module's go.mod requires of MODULE.
go_mod_version() { # DIR MODULE
  awk -v module="$2" '{ for (i = 1; i < NF; i++) if ($i == module) { print $(i + 1); exit } }' "$1/go.mod"
}

# Builds PACKAGE from the wrapper module in DIR into $BIN/NAME-VERSION. The
# wrapper's go.sum pins every module (-mod=readonly), so nothing unverified is
# fetched and the checksum database is never needed; the build goes to a temp
# name first, so an interrupted build never leaves a broken binary.
go_build_pinned() { # NAME VERSION DIR PACKAGE [LDFLAGS]
  local target="$BIN/$1-$2" tmp="$BIN/$1-$2.tmp.$$"
  command -v go >/dev/null || die "go not found; it is needed to build $1"
  log "building $1 $2 (first time only)"
  (cd "$3" && GOWORK=off GOTOOLCHAIN=local GOSUMDB=off CGO_ENABLED=0 \
    go build -mod=readonly -buildvcs=false -trimpath -ldflags "-s -w ${5:-}" -o "$tmp" "$4") >&2 ||
    { rm -f "$tmp"; die "building $1 failed"; }
  mv -f "$tmp" "$target"
}

# Points $BIN/NAME at TARGET (atomically, for readers in other processes).
link_bin() { # NAME TARGET
  ln -sfn "$2" "$BIN/$1.tmp.$$"
  mv -fT "$BIN/$1.tmp.$$" "$BIN/$1"
}

# A venv on Debian's /usr/bin/python3, where python3-uno is installed (a python3
# earlier on PATH may lack it), with hash-pinned requirements. A venv cannot be
# moved, so it is built in place; callers check it and rebuild a broken one.
python_venv() { # VENV REQUIREMENTS
  rm -rf "$1"
  /usr/bin/python3 -m venv --system-site-packages "$1" >&2
  # --no-build-isolation: an sdist is built with the venv's own setuptools, not an unpinned download.
  "$1/bin/pip" install -q --disable-pip-version-check --no-build-isolation --require-hashes -r "$2" >&2
}

# A PyPI tool in a venv of its own at $CACHE/NAME-VERSION, linked as $BIN/NAME;
# rebuilt unless `NAME --version` starts with BANNER (which also catches a broken venv).
pip_tool() { # NAME VERSION REQUIREMENTS BANNER
  local venv="$CACHE/$1-$2"
  if [[ "$("$venv/bin/$1" --version 2>/dev/null)" != "$4"* ]]; then
    log "installing $1 $2 from PyPI (first time only)"
    python_venv "$venv" "$3"
    [[ "$("$venv/bin/$1" --version 2>&1)" == "$4"* ]] || die "$venv/bin/$1 does not run"
  fi
  link_bin "$1" "../$1-$2/bin/$1"
  report "$1" "$2" "$venv/bin/$1"
}
