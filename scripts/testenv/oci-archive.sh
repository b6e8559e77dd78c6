#!/usr/bin/env bash
# Packs a directory as a one-layer OCI image archive (an OCI layout in a tar),
# for `ctr -n k8s.io images import` on the test node (test/support/kube-node.ts).
#
#   oci-archive.sh OUT.tar NAME:TAG ROOTFS ENTRYPOINT [ARG...]
#
# The layer is an uncompressed tar with fixed owners and times, so the same
# ROOTFS gives the same digests. The index names the image twice: containerd's
# own annotation (the full name ctr imports it as) and the OCI ref name (the tag).
set -euo pipefail
(($# >= 4)) || { echo "usage: $0 OUT.tar NAME:TAG ROOTFS ENTRYPOINT [ARG...]" >&2; exit 2; }
out="$1" name="$2" rootfs="$3"
shift 3

layout="$(mktemp -d)"
trap 'rm -rf "$layout"' EXIT
mkdir -p "$layout/blobs/sha256"

# Moves FILE into the blob store; prints "DIGEST SIZE".
add_blob() { # FILE
  local digest size
  digest="sha256:$(sha256sum "$1" | cut -d' ' -f1)"
  size="$(stat -c %s "$1")"
  mv "$1" "$layout/blobs/sha256/${digest#sha256:}"
  echo "$digest $size"
}

tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
  -C "$rootfs" -cf "$layout/layer" .
read -r layer layer_size < <(add_blob "$layout/layer")

jq -n --arg layer "$layer" '{
  architecture: "amd64",
  os: "linux",
  config: { Entrypoint: $ARGS.positional, Env: ["PATH=/bin:/usr/bin:/sbin:/usr/sbin"], WorkingDir: "/" },
  rootfs: { type: "layers", diff_ids: [$layer] }
}' --args "$@" >"$layout/config"
read -r config config_size < <(add_blob "$layout/config")

jq -n --arg config "$config" --argjson config_size "$config_size" --arg layer "$layer" --argjson layer_size "$layer_size" '{
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: $config, size: $config_size },
  layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $layer, size: $layer_size }]
}' >"$layout/manifest"
read -r manifest manifest_size < <(add_blob "$layout/manifest")

jq -n --arg manifest "$manifest" --argjson manifest_size "$manifest_size" --arg name "$name" '{
  schemaVersion: 2,
  manifests: [{
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    digest: $manifest,
    size: $manifest_size,
    annotations: { "io.containerd.image.name": $name, "org.opencontainers.image.ref.name": ($name | sub(".*:"; "")) }
  }]
}' >"$layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"

tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$layout" -cf "$out.tmp.$$" oci-layout index.json blobs
mv -f "$out.tmp.$$" "$out"
