#!/usr/bin/env bash
# Builds the Debian root filesystem of one test cluster image with mmdebstrap,
# as scripts/image/rootfs.sh does for DocService's own images (lib.sh's
# debian_rootfs): bookworm's Essential set, merged /usr, the packages pinned in
# packages-NAME.txt, no documentation, manuals or translations.
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
source "$HERE/../../image/lib.sh"
name="$1" out="$2" repin="${3:-}"

# The JRE's postinst registers its manual pages with update-alternatives, which
# fails without /usr/share/man/man1: the essential hook makes it, the customize
# hook removes it again.
debian_rootfs "$name" "$out" "$HERE/packages-$name.lock" scripts/testenv/cluster-images.sh "docservice-testenv/$name's Debian layer" "$repin" \
  --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook="bash '$HERE/rootfs-customize.sh' \"\$1\" $name" \
  -- "$HERE/packages-$name.txt"
