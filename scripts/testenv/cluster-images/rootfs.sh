#!/usr/bin/env bash
# Builds the Debian root filesystem of one test cluster image with mmdebstrap,
# as scripts/image/rootfs.sh does for DocService's own images: bookworm's
# Essential set, merged /usr, the packages pinned in packages-NAME.txt, no
# documentation, manuals or translations.
#
#   rootfs.sh redis|kafka OUT_DIR [--repin]
#
# Writes OUT_DIR/rootfs/ and OUT_DIR/installed.txt (name=version of every
# installed package), then compares them with packages-NAME.lock and stops when
# they differ (Debian's archive replaced a pinned version). With --repin it
# installs the newest versions instead and rewrites packages-NAME.txt and .lock.
# Settings come from images.env through cluster-images.sh's environment.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name="$1" out="$2" repin="${3:-}"
: "${DEBIAN_SUITE:?}" "${DEBIAN_MIRROR:?}" "${DEBIAN_SECURITY_MIRROR:?}" "${DEBIAN_PINNED_AT:?}" "${IMAGE_UID:?}"
list="$HERE/packages-$name.txt"
lock="$HERE/packages-$name.lock"
[[ -f "$list" ]] || { echo "rootfs.sh: no $list" >&2; exit 2; }

# name=version lines of a list (comments and blank lines dropped).
pins() { sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$@"; }

includes=()
if [[ "$repin" == --repin ]]; then
  while read -r pin; do includes+=("${pin%%=*}"); done < <(pins "$list")
else
  [[ -f "$lock" ]] || { echo "rootfs.sh: no $lock: run bash scripts/testenv/cluster-images.sh --repin" >&2; exit 1; }
  # The lock pins the dependencies too, so apt resolves the same set.
  while read -r pin; do includes+=("$pin"); done < <(pins "$list" "$lock" | LC_ALL=C sort -u)
fi

rm -rf "$out/rootfs" "$out/installed.txt"
mkdir -p "$out/rootfs"
# The hook inherits these; SOURCE_DATE_EPOCH also makes dpkg and mmdebstrap
# write reproducible times.
export SOURCE_DATE_EPOCH="$DEBIAN_PINNED_AT" IMAGE_UID INSTALLED_LIST="$out/installed.txt"
mmdebstrap --mode=root --variant=essential --format=directory --quiet \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Retries "3"' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --include="$(IFS=,; echo "${includes[*]}")" \
  --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook="bash '$HERE/rootfs-customize.sh' \"\$1\" $name" \
  "$DEBIAN_SUITE" "$out/rootfs" \
  "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" \
  "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
  "deb $DEBIAN_SECURITY_MIRROR $DEBIAN_SUITE-security main" >"$out/mmdebstrap.log" 2>&1 ||
  { tail -40 "$out/mmdebstrap.log" >&2; echo "rootfs.sh: mmdebstrap failed (log: $out/mmdebstrap.log)" >&2; exit 1; }
# (The JRE's postinst registers its manual pages with update-alternatives, which
# fails without /usr/share/man/man1: the essential hook makes it, the customize
# hook removes it again.)
# Containers get /dev from the runtime; the layer carries only the directory.
find "$out/rootfs/dev" -mindepth 1 -delete
[[ -s "$out/installed.txt" ]] || { echo "rootfs.sh: the customize hook did not run" >&2; exit 1; }

if [[ "$repin" == --repin ]]; then
  # The list keeps its comments and order; versions come from what was installed.
  tmp="$list.tmp.$$"
  while IFS= read -r line; do
    package="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e 's/=.*//' <<<"$line")"
    if [[ -z "$package" ]]; then echo "$line"; continue; fi
    version="$(sed -n "s/^$(sed 's/[.+]/\\&/g' <<<"$package")=//p" "$out/installed.txt")"
    [[ -n "$version" ]] || { echo "rootfs.sh: $package was not installed" >&2; exit 1; }
    echo "$package=$version"
  done <"$list" >"$tmp"
  mv "$tmp" "$list"
  { echo "# Every package in docservice-testenv/$name's Debian layer, as installed: written by"
    echo "# \`bash scripts/testenv/cluster-images.sh --repin\`, checked by every build. Do not edit."
    cat "$out/installed.txt"; } >"$lock"
  echo "rootfs.sh: pinned $(wc -l <"$out/installed.txt") packages in $lock" >&2
elif ! diff <(pins "$lock") "$out/installed.txt" >"$out/lock.diff"; then
  echo "rootfs.sh: the $name root filesystem differs from $lock (< pinned, > installed):" >&2
  cat "$out/lock.diff" >&2
  echo "rootfs.sh: Debian's archive no longer serves a pinned version: run \`bash scripts/testenv/cluster-images.sh --repin\` and commit scripts/testenv/cluster-images/packages-*" >&2
  exit 1
fi
