#!/usr/bin/env bash
# mmdebstrap's customize hook for the test cluster images (rootfs.sh):
#   rootfs-customize.sh ROOTFS redis|kafka
# Adds the non-root user, checks that the server starts at all, and removes
# what only the build wrote (logs, caches, -old files), so that two builds from
# the same pins give the same files. Runs as root on the host; commands inside
# the root filesystem run with chroot.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../image/lib.sh"
root="$1" name="$2"
: "${IMAGE_UID:?}" "${SOURCE_DATE_EPOCH:?}" "${INSTALLED_LIST:?}"

rootfs_user "$root" nonroot "non-root user" /nonexistent

case "$name" in
  redis) chroot "$root" /usr/bin/redis-server --version >&2 ;;
  kafka) chroot "$root" /usr/lib/jvm/java-17-openjdk-amd64/bin/java -XX:-UsePerfData -version >&2 ;;
  *) echo "rootfs-customize.sh: unknown image $name" >&2; exit 2 ;;
esac

# Build-time leftovers (also the JVM's ~/.java and the manual directory
# rootfs.sh's essential hook made); file times clamped to the pin time.
rootfs_tidy "$root" root/.java usr/share/man

rootfs_installed "$root"
# mmdebstrap copied the host's resolver settings and name in: the container
# runtime provides its own (Kubernetes mounts both).
rm -f "$root/etc/resolv.conf" "$root/etc/hostname"
