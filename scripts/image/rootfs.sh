#!/usr/bin/env bash
# Builds the Debian root filesystem of one image with mmdebstrap (no Docker, no
# base image): bookworm's Essential set, merged /usr, and the packages pinned in
# packages-core.txt (+ packages-conversion.txt), without documentation, manuals
# and translations.
#
#   rootfs.sh core|conversion OUT_DIR [--repin]
#
# Writes OUT_DIR/rootfs/ and OUT_DIR/installed.txt (name=version of every
# installed package). It then compares them with packages-FLAVOR.lock and stops
# when they differ (the archive replaced a pinned version); with --repin it
# installs the newest versions instead and rewrites the pins (packages-*.txt,
# packages-FLAVOR.lock). Sourced settings: image.env (via build.sh's
# environment). Run by build.sh as root.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
flavor="$1" out="$2" repin="${3:-}"
: "${DEBIAN_SUITE:?}" "${DEBIAN_MIRROR:?}" "${DEBIAN_SECURITY_MIRROR:?}" "${DEBIAN_PINNED_AT:?}" "${IMAGE_UID:?}"

case "$flavor" in
  core) lists=("$HERE/packages-core.txt") ;;
  conversion) lists=("$HERE/packages-core.txt" "$HERE/packages-conversion.txt") ;;
  *) echo "rootfs.sh: unknown image $flavor" >&2; exit 2 ;;
esac
lock="$HERE/packages-$flavor.lock"

# name=version lines of a list (comments and blank lines dropped).
pins() { sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$@"; }

includes=()
if [[ "$repin" == --repin ]]; then
  while read -r pin; do includes+=("${pin%%=*}"); done < <(pins "${lists[@]}")
else
  # The lock pins the dependencies too, so apt resolves the same set.
  while read -r pin; do includes+=("$pin"); done < <(pins "${lists[@]}" "$lock" | LC_ALL=C sort -u)
fi

wheels=""
if [[ "$flavor" == conversion ]]; then
  # unoserver's wheel, checked against the hash in unoserver-requirements.txt.
  wheels="$out/wheels"
  mkdir -p "$wheels"
  cp "$HERE/../install/unoserver-requirements.txt" "$wheels/"
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
    -r "$wheels/unoserver-requirements.txt" -d "$wheels" >&2
fi

rm -rf "$out/rootfs" "$out/installed.txt"
mkdir -p "$out/rootfs"
# The hook inherits these; SOURCE_DATE_EPOCH also makes dpkg, pip and
# mmdebstrap itself write reproducible times and byte-code.
export SOURCE_DATE_EPOCH="$DEBIAN_PINNED_AT" IMAGE_UID INSTALLED_LIST="$out/installed.txt"
mmdebstrap --mode=root --variant=essential --format=directory --quiet \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Retries "3"' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --include="$(IFS=,; echo "${includes[*]}")" \
  --customize-hook="bash '$HERE/rootfs-customize.sh' \"\$1\" $flavor '$wheels'" \
  "$DEBIAN_SUITE" "$out/rootfs" \
  "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" \
  "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
  "deb $DEBIAN_SECURITY_MIRROR $DEBIAN_SUITE-security main" >"$out/mmdebstrap.log" 2>&1 ||
  { tail -40 "$out/mmdebstrap.log" >&2; echo "rootfs.sh: mmdebstrap failed (log: $out/mmdebstrap.log)" >&2; exit 1; }
# Containers get /dev from the runtime; the layer carries only the directory.
find "$out/rootfs/dev" -mindepth 1 -delete
[[ -s "$out/installed.txt" ]] || { echo "rootfs.sh: the customize hook did not run" >&2; exit 1; }

if [[ "$repin" == --repin ]]; then
  # Every list keeps its comments and order; versions come from what was installed.
  for list in "$HERE/packages-$flavor.txt"; do
    tmp="$list.tmp.$$"
    while IFS= read -r line; do
      name="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e 's/=.*//' <<<"$line")"
      if [[ -z "$name" ]]; then echo "$line"; continue; fi
      version="$(awk -v name="$name" 'index($0, name "=") == 1 { print substr($0, length(name) + 2) }' "$out/installed.txt")"
      [[ -n "$version" ]] || { echo "rootfs.sh: $name was not installed" >&2; exit 1; }
      echo "$name=$version"
    done < "$list" > "$tmp"
    mv "$tmp" "$list"
  done
  { echo "# Every package in the $flavor image's Debian layer(s), as installed: written by"
    echo "# \`bash scripts/image/build.sh --repin\`, checked by every build. Do not edit."
    cat "$out/installed.txt"; } > "$lock"
  echo "rootfs.sh: pinned $(wc -l < "$out/installed.txt") packages in $lock" >&2
elif ! diff <(pins "$lock") "$out/installed.txt" >"$out/lock.diff"; then
  echo "rootfs.sh: the $flavor root filesystem differs from $lock (< pinned, > installed):" >&2
  cat "$out/lock.diff" >&2
  echo "rootfs.sh: Debian's archive no longer serves a pinned version: run \`bash scripts/image/build.sh --repin\` and commit scripts/image/packages-*" >&2
  exit 1
fi
