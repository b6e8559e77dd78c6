#!/usr/bin/env bash
# Builds the Debian root filesystem of one image (lib.sh's debian_rootfs:
# mmdebstrap, bookworm's Essential set, merged /usr, no documentation, manuals
# and translations) with the packages pinned in packages-core.txt
# (+ packages-conversion.txt), and for conversion unoserver's wheel.
#
#   rootfs.sh core|conversion OUT_DIR [--repin]
#
# Writes OUT_DIR/rootfs/ and OUT_DIR/installed.txt (name=version of every
# installed package). It then compares them with packages-FLAVOR.lock and stops
# when they differ (the archive replaced a pinned version); with --repin it
# installs the newest versions instead and rewrites the pins
# (packages-FLAVOR.txt, packages-FLAVOR.lock). Sourced settings: image.env (via
# build.sh's environment). Run by build.sh as root.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
flavor="$1" out="$2" repin="${3:-}"

case "$flavor" in
  core) lists=("$HERE/packages-core.txt") ;;
  conversion) lists=("$HERE/packages-core.txt" "$HERE/packages-conversion.txt") ;;
  *) echo "rootfs.sh: unknown image $flavor" >&2; exit 2 ;;
esac

wheels=""
if [[ "$flavor" == conversion ]]; then
  # unoserver's wheel, checked against the hash in unoserver-requirements.txt.
  wheels="$out/wheels"
  mkdir -p "$wheels"
  cp "$HERE/../install/unoserver-requirements.txt" "$wheels/"
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
    -r "$wheels/unoserver-requirements.txt" -d "$wheels" >&2
fi

debian_rootfs "$flavor" "$out" "$HERE/packages-$flavor.lock" scripts/image/build.sh "the $flavor image's Debian layer(s)" "$repin" \
  --customize-hook="bash '$HERE/rootfs-customize.sh' \"\$1\" $flavor '$wheels'" \
  -- "${lists[@]}"
