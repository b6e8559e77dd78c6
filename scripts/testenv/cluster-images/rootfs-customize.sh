#!/usr/bin/env bash
# mmdebstrap's customize hook for the test cluster images (rootfs.sh):
#   rootfs-customize.sh ROOTFS redis|kafka
# Adds the non-root user, checks that the server starts at all, and removes
# what only the build wrote (logs, caches, -old files), so that two builds from
# the same pins give the same files. Runs as root on the host; commands inside
# the root filesystem run with chroot.
set -euo pipefail
root="$1" name="$2"
: "${IMAGE_UID:?}" "${SOURCE_DATE_EPOCH:?}" "${INSTALLED_LIST:?}"

# The user: numeric in the image config (runAsNonRoot checks the number); named
# here so tools that print user names show one. No password, no login shell.
grep -q "^nonroot:" "$root/etc/passwd" ||
  echo "nonroot:x:$IMAGE_UID:$IMAGE_UID:non-root user:/nonexistent:/usr/sbin/nologin" >>"$root/etc/passwd"
grep -q "^nonroot:" "$root/etc/group" || echo "nonroot:x:$IMAGE_UID:" >>"$root/etc/group"

case "$name" in
  redis) chroot "$root" /usr/bin/redis-server --version >&2 ;;
  kafka) chroot "$root" /usr/lib/jvm/java-17-openjdk-amd64/bin/java -XX:-UsePerfData -version >&2 ;;
  *) echo "rootfs-customize.sh: unknown image $name" >&2; exit 2 ;;
esac

# Build-time leftovers.
rm -rf "$root"/var/log/* "$root"/var/cache/ldconfig/aux-cache "$root"/var/lib/dpkg/*-old \
  "$root"/var/cache/debconf/*-old "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* \
  "$root"/tmp/* "$root"/var/tmp/* "$root"/root/.cache "$root"/root/.java \
  "$root"/usr/share/man

# File times: nothing newer than the pin time (the layer tar clamps the same way).
# (/proc, /sys and /dev are mounted while the hook runs: not ours to touch.)
find "$root" -xdev \( -path "$root/proc" -o -path "$root/sys" -o -path "$root/dev" \) -prune -o \
  -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# What is installed, for rootfs.sh to compare with the lock.
chroot "$root" dpkg-query -W -f '${Package}=${Version}\n' | LC_ALL=C sort >"$INSTALLED_LIST"
# mmdebstrap copied the host's resolver settings and name in: the container
# runtime provides its own (Kubernetes mounts both).
rm -f "$root/etc/resolv.conf" "$root/etc/hostname"
