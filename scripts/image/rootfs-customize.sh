#!/usr/bin/env bash
# mmdebstrap's customize hook for the image root filesystems (rootfs.sh):
#   rootfs-customize.sh ROOTFS core|conversion [UNOSERVER_WHEELS_DIR]
# Adds the non-root user and the directories the platform writes to (volumes in
# Kubernetes), installs unoserver in a venv for the conversion image, and
# removes what only the build wrote (logs, caches, -old files), so that two
# builds from the same pins give the same files. Runs as root on the host;
# commands inside the root filesystem run with chroot.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root="$1" flavor="$2" wheels="${3:-}"
: "${IMAGE_UID:?}" "${SOURCE_DATE_EPOCH:?}" "${INSTALLED_LIST:?}"

# The non-root user, named docservice.
rootfs_user "$root" docservice DocService /home/docservice
# The application (root-owned, read-only to the user), the data directory and
# HOME (both mount points in Kubernetes; owned by the user for plain runs).
install -d -m 0755 "$root/app"
install -d -m 0750 -o "$IMAGE_UID" -g "$IMAGE_UID" "$root/var/lib/docservice" "$root/home/docservice"

if [[ "$flavor" == conversion ]]; then
  # unoserver in a venv on Debian's python3 (where python3-uno is), from the
  # hash-pinned wheel rootfs.sh downloaded: nothing is fetched inside the rootfs.
  chroot "$root" /usr/bin/python3 -m venv --system-site-packages /opt/unoserver
  mkdir -p "$root/tmp/unoserver-wheels"
  cp "$wheels"/* "$root/tmp/unoserver-wheels/"
  # SOURCE_DATE_EPOCH is set: pip's byte-compilation writes hash-checked .pyc
  # files, which stay valid when the layer's file times are clamped.
  chroot "$root" /opt/unoserver/bin/pip install -q --disable-pip-version-check --no-index --no-cache-dir \
    --find-links /tmp/unoserver-wheels --require-hashes -r /tmp/unoserver-wheels/unoserver-requirements.txt
  rm -rf "$root/tmp/unoserver-wheels"
  chroot "$root" /opt/unoserver/bin/unoserver --version >&2
fi

# Build-time leftovers; file times clamped to the pin time.
rootfs_tidy "$root"
# fontconfig's caches record their font directories' times, so they are
# rebuilt after the clamp and stay valid under a read-only root (else every
# LibreOffice start rescans the fonts).
if [[ -x "$root/usr/bin/fc-cache" ]]; then
  rm -rf "$root/var/cache/fontconfig"
  chroot "$root" /usr/bin/fc-cache -s -f
  find "$root/var/cache/fontconfig" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
fi

rootfs_installed "$root"
