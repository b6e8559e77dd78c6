#!/usr/bin/env bash
# Builds the two images the test cluster runs beside DocService, without a
# Docker daemon and without pulling a base image (the technique of
# scripts/image/build.sh: mmdebstrap, umoci, skopeo):
#
#   docservice-testenv/redis:<redis-server's Debian version>  e.g. 7.0.15-1-deb12u10
#       Debian bookworm's redis-server; /etc/redis/docservice.conf (every
#       interface, appendonly yes, dir /data); uid 65532; WORKDIR and volume /data
#   docservice-testenv/kafka:<Kafka version>                  e.g. 3.9.2
#       Debian bookworm's OpenJDK 17 JRE and the Kafka jars of
#       scripts/testenv/kafka-jars.txt (sha256-checked); a single-node KRaft
#       broker+controller (cluster-images/kafka-entrypoint.sh); uid 65532;
#       volume /var/lib/kafka
#
# Layers: the Debian root filesystem (cluster-images/rootfs.sh: pinned in
# cluster-images/packages-NAME.txt and .lock), then the image's own files. Each
# image is written as an OCI archive (its index also carries containerd's
# io.containerd.image.name, so `ctr import` names it) and a docker-archive, in
# $CACHE/images/testenv/ (CACHE: ~/.cache/docservice unless DOCSERVICE_CACHE).
#
#   bash scripts/testenv/cluster-images.sh           build (or reuse) both images
#   bash scripts/testenv/cluster-images.sh --repin   take the Debian archive's current
#                                                    versions into cluster-images/packages-*
#
# stdout: one line per archive: name, tag, path. Progress goes to stderr.
# Cached: a root filesystem is rebuilt only when its package lists or recipe
# change, an image only when one of its inputs does; a run with nothing to do
# takes about a second. Needs root (mmdebstrap --mode=root, chroot).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="$HERE/cluster-images"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$HERE/../.." && pwd)"
source "$ROOT/scripts/install/lib.sh"

repin=""
for arg in "$@"; do
  case "$arg" in
    --repin) repin=--repin ;;
    *) die "cluster-images.sh: unknown argument $arg (expected --repin)" ;;
  esac
done
[[ $EUID -eq 0 ]] || die "cluster-images.sh runs as root (mmdebstrap --mode=root, chroot)"

# images.env, each value overridable from the environment.
while IFS='=' read -r key value; do
  [[ "$key" =~ ^[A-Z_]+$ ]] || continue
  [[ -n "${!key:-}" ]] || printf -v "$key" '%s' "$value"
  export "${key?}"
done <"$DIR/images.env"

OUT="$CACHE/images/testenv"
mkdir -p "$OUT/rootfs"
# One build at a time (a test and the end-to-end test may start together).
exec 9>"$OUT/.lock"
flock 9
started=$SECONDS
sha() { sha256sum | cut -c1-"${1:-64}"; }
pins() { sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$@"; }

# mmdebstrap builds the root filesystems; umoci assembles OCI layouts; jq names
# them for containerd; skopeo writes the docker-archives (and checks the OCI
# ones); runc runs them (test/integration/cluster-images.test.ts).
apt_install mmdebstrap umoci jq skopeo runc

# --- what is built ----------------------------------------------------------------
KAFKA_JARS="$HERE/kafka-jars.txt"
KAFKA_VERSION="$(sed -n 's/^[0-9a-f]\{64\} org\.apache\.kafka:kafka_2\.13:\(.*\)$/\1/p' "$KAFKA_JARS")"
[[ "$KAFKA_VERSION" =~ ^3\.9\.[0-9]+$ ]] || die "$KAFKA_JARS pins no kafka_2.13 3.9.x (found '$KAFKA_VERSION')"
REDIS_DEBIAN_VERSION="$(pins "$DIR/packages-redis.txt" | sed -n 's/^redis-server=//p')"
[[ -n "$REDIS_DEBIAN_VERSION" ]] || die "$DIR/packages-redis.txt pins no redis-server"
# A tag allows [A-Za-z0-9_.-]: 5:7.0.15-1~deb12u10 -> 7.0.15-1-deb12u10 (no epoch).
REDIS_TAG="$(sed -e 's/^[0-9]*://' -e 's/[^A-Za-z0-9_.-]/-/g' <<<"$REDIS_DEBIAN_VERSION")"
KAFKA_TAG="$KAFKA_VERSION"
# Where openjdk-17-jre-headless puts the JRE (rootfs-customize.sh runs its java -version).
JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
PINNED="$(date -u -d "@$DEBIAN_PINNED_AT" +%Y-%m-%dT%H:%M:%SZ)"

# --- root filesystems ---------------------------------------------------------------
MMDEBSTRAP_VERSION="$(mmdebstrap --version)"
rootfs_key() { # NAME: what its root filesystem is made from
  { echo "$MMDEBSTRAP_VERSION $DEBIAN_SUITE $DEBIAN_MIRROR $DEBIAN_SECURITY_MIRROR $DEBIAN_PINNED_AT $IMAGE_UID"
    cat "$DIR/rootfs.sh" "$DIR/rootfs-customize.sh" "$DIR/packages-$1.txt" "$DIR/packages-$1.lock" 2>/dev/null || true; } | sha 16
}

# Deterministic layer tar of DIR (sorted, numeric owners, times clamped to EPOCH).
# The same recipe as scripts/image/build.sh's layer_tar.
layer_tar() { # DIR OUT EPOCH
  tar --create --file "$2.tmp" --directory "$1" --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$3" --clamp-mtime --numeric-owner .
  mv "$2.tmp" "$2"
}

# Builds (or reuses) the root filesystem of NAME and its layer tar; prints its directory.
rootfs() { # NAME
  local name="$1" key dir t
  key="$(rootfs_key "$name")"
  dir="$OUT/rootfs/$name-$key"
  if [[ ! -f "$dir/.done" ]]; then
    log "building the $name root filesystem (mmdebstrap $DEBIAN_SUITE, about a minute)"
    t=$SECONDS
    rm -rf "$dir"
    bash "$DIR/rootfs.sh" "$name" "$dir"
    layer_tar "$dir/rootfs" "$dir/layer.tar" "$DEBIAN_PINNED_AT"
    rm -rf "$dir/rootfs" # the layer tar is all that is used
    touch "$dir/.done"
    log "$name root filesystem built in $((SECONDS - t)) s"
    find "$OUT/rootfs" -mindepth 1 -maxdepth 1 -name "$name-*" ! -path "$dir" -exec rm -rf {} +
  fi
  echo "$dir"
}

if [[ -n "$repin" ]]; then
  log "repinning: the Debian archive's current versions, pin time now"
  sed -i "s/^DEBIAN_PINNED_AT=.*/DEBIAN_PINNED_AT=$(date +%s)/" "$DIR/images.env"
  DEBIAN_PINNED_AT="$(sed -n 's/^DEBIAN_PINNED_AT=//p' "$DIR/images.env")"
  export DEBIAN_PINNED_AT
  PINNED="$(date -u -d "@$DEBIAN_PINNED_AT" +%Y-%m-%dT%H:%M:%SZ)"
  for name in redis kafka; do
    tmp="$OUT/rootfs/repin-$name"
    rm -rf "$tmp"
    bash "$DIR/rootfs.sh" "$name" "$tmp" --repin
    # What the pins now say is what was just installed: keep it as the cached rootfs.
    dir="$OUT/rootfs/$name-$(rootfs_key "$name")"
    rm -rf "$dir"
    layer_tar "$tmp/rootfs" "$tmp/layer.tar" "$DEBIAN_PINNED_AT"
    rm -rf "$tmp/rootfs"
    touch "$tmp/.done"
    mv -T "$tmp" "$dir"
    find "$OUT/rootfs" -mindepth 1 -maxdepth 1 -name "$name-*" ! -path "$dir" -exec rm -rf {} +
  done
  REDIS_DEBIAN_VERSION="$(pins "$DIR/packages-redis.txt" | sed -n 's/^redis-server=//p')"
  REDIS_TAG="$(sed -e 's/^[0-9]*://' -e 's/[^A-Za-z0-9_.-]/-/g' <<<"$REDIS_DEBIAN_VERSION")"
  log "pins written: review and commit scripts/testenv/cluster-images/packages-* and images.env"
fi

# --- the image cache ------------------------------------------------------------------
# An image's key: its root filesystem, its own files, this script.
image_key() { # NAME ROOTFS-DIR FILES...
  local name="$1" rootfs_dir="$2"
  shift 2
  { echo "$name $rootfs_dir $REDIS_REPOSITORY $KAFKA_REPOSITORY $REDIS_TAG $KAFKA_TAG $IMAGE_UID $PINNED"
    skopeo --version; umoci --version; cat "$SELF" "$@"; } | sha 16
}
# The summary JSON of an image whose archives all exist, else nothing.
cached_summary() { # STEM
  [[ -f "$1.json" && -f "$1.oci.tar" && -f "$1.docker.tar" ]] && echo "$1.json"
}
print_result() { # SUMMARY...
  python3 - "$@" <<'PY'
import json, sys
for path in sys.argv[1:]:
    image = json.load(open(path))
    for kind in ("ociArchive", "dockerArchive"):
        print(f'{image["name"]:<8} {image["tag"]:<44} {image[kind]}')
    print(f'  {image["tag"]}: {image["compressedBytes"] / 1e6:.1f} MB compressed (layers), '
          f'{image["uncompressedBytes"] / 1e6:.1f} MB uncompressed, manifest {image["manifestDigest"]}', file=sys.stderr)
PY
}

# --- image files ------------------------------------------------------------------------
# Kafka's jars: the cached ones of scripts/testenv/kafka.sh ($CACHE/maven), each
# checked against kafka-jars.txt's sha256; a missing or different one is fetched
# from Maven Central and checked the same way (as kafka.sh's fetch_jar does).
MAVEN_CENTRAL=https://repo1.maven.org/maven2
maven_path() { # GROUP:ARTIFACT:VERSION
  local group artifact version
  IFS=: read -r group artifact version <<<"$1"
  echo "${group//.//}/$artifact/$version/$artifact-$version.jar"
}
kafka_jars() { # LIBS-DIR
  local sha coords path count=0
  while read -r sha coords; do
    [[ -z "$sha" || "$sha" == \#* ]] && continue
    path="$CACHE/maven/$(maven_path "$coords")"
    if [[ ! -f "$path" || "$(sha256sum "$path" | cut -d' ' -f1)" != "$sha" ]]; then
      log "fetching $coords from Maven Central"
      mkdir -p "$(dirname "$path")"
      curl -fsSL --retry 3 -o "$path.tmp.$$" "$MAVEN_CENTRAL/$(maven_path "$coords")" || { rm -f "$path.tmp.$$"; die "downloading $coords failed"; }
      [[ "$(sha256sum "$path.tmp.$$" | cut -d' ' -f1)" == "$sha" ]] || { rm -f "$path.tmp.$$"; die "$coords: sha256 differs from $KAFKA_JARS"; }
      mv -f "$path.tmp.$$" "$path"
    fi
    install -m 0644 -o 0 -g 0 "$path" "$1/"
    count=$((count + 1))
  done <"$KAFKA_JARS"
  log "$count Kafka jars checked against $KAFKA_JARS"
}

# The image's own layer (beside the Debian one), staged in DIR.
stage_redis() { # DIR
  install -d -m 0755 -o 0 -g 0 "$1/etc" "$1/etc/redis"
  install -m 0644 -o 0 -g 0 "$DIR/redis.conf" "$1/etc/redis/docservice.conf"
  # The volume; owned by the user for runs without one (fsGroup covers a mounted one).
  install -d -m 0750 -o "$IMAGE_UID" -g "$IMAGE_UID" "$1/data"
}
stage_kafka() { # DIR
  install -d -m 0755 -o 0 -g 0 "$1/opt" "$1/opt/kafka" "$1/opt/kafka/libs" "$1/opt/kafka/config" "$1/opt/kafka/bin" \
    "$1/var" "$1/var/lib"
  kafka_jars "$1/opt/kafka/libs"
  install -m 0644 -o 0 -g 0 "$DIR/kafka-log4j.properties" "$1/opt/kafka/config/log4j.properties"
  install -m 0755 -o 0 -g 0 "$DIR/kafka-entrypoint.sh" "$1/opt/kafka/bin/kafka-entrypoint"
  install -d -m 0750 -o "$IMAGE_UID" -g "$IMAGE_UID" "$1/var/lib/kafka"
}

# --- assembly and archives ----------------------------------------------------------------
POLICY="$OUT/policy.json"
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$POLICY"

# Builds NAME from its root filesystem and staged layer into STEM.{oci,docker}.tar
# and STEM.json; CONFIG: more `umoci config` options.
build_image() { # NAME REPOSITORY TAG ROOTFS-DIR STEM WHAT CONFIG...
  local name="$1" repository="$2" tag="$3" rootfs_dir="$4" stem="$5" what="$6"
  shift 6
  local work="$OUT/work-$name" t=$SECONDS
  rm -rf "$work" && mkdir -p "$work/stage"
  "stage_$name" "$work/stage"
  layer_tar "$work/stage" "$work/files.tar" "$DEBIAN_PINNED_AT"

  local layout="$work/oci"
  umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  umoci raw add-layer --image "$layout:$tag" --history.created "$PINNED" \
    --history.created_by "Debian $DEBIAN_SUITE root filesystem: scripts/testenv/cluster-images/packages-$name.lock" \
    "$rootfs_dir/layer.tar"
  umoci raw add-layer --image "$layout:$tag" --history.created "$PINNED" --history.created_by "$what" "$work/files.tar"
  umoci config --image "$layout:$tag" --no-history --created "$PINNED" --author "DocService test environment" \
    --config.user "$IMAGE_UID:$IMAGE_UID" --config.stopsignal SIGTERM \
    --config.label "org.opencontainers.image.title=$repository" \
    --config.label "org.opencontainers.image.version=$tag" \
    --config.label "org.opencontainers.image.created=$PINNED" \
    --config.label "org.opencontainers.image.description=$what" \
    --config.label "org.opencontainers.image.base.name=debian:$DEBIAN_SUITE (mmdebstrap, scripts/testenv/cluster-images/packages-$name.lock)" \
    "$@"
  umoci gc --layout "$layout"
  # The index names the image as containerd's `ctr import` reads it (its own
  # annotation, the full name) and as the OCI spec does (the tag alone).
  jq --arg name "docker.io/$repository:$tag" --arg tag "$tag" \
    '.manifests |= map(.annotations = {"io.containerd.image.name": $name, "org.opencontainers.image.ref.name": $tag})' \
    "$layout/index.json" >"$layout/index.json.tmp"
  mv "$layout/index.json.tmp" "$layout/index.json"

  rm -f "$stem.oci.tar" "$stem.docker.tar" "$stem.json"
  tar --create --file "$stem.oci.tar.tmp" --directory "$layout" --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$DEBIAN_PINNED_AT" --owner=0 --group=0 --numeric-owner oci-layout index.json blobs
  mv "$stem.oci.tar.tmp" "$stem.oci.tar"
  skopeo --policy "$POLICY" inspect --raw "oci-archive:$stem.oci.tar" >/dev/null
  skopeo --policy "$POLICY" copy --quiet "oci:$layout:$tag" "docker-archive:$stem.docker.tar.tmp:$repository:$tag" >&2
  mv "$stem.docker.tar.tmp" "$stem.docker.tar"

  python3 - "$layout" "$name" "$repository" "$tag" "$stem" "$((SECONDS - t))" >"$stem.json.tmp" <<'PY'
import gzip, json, os, sys
layout, name, repository, tag, stem, seconds = sys.argv[1:7]
blob = lambda digest: os.path.join(layout, "blobs", *digest.split(":"))
descriptor = json.load(open(os.path.join(layout, "index.json")))["manifests"][0]
manifest = json.load(open(blob(descriptor["digest"])))
config = json.load(open(blob(manifest["config"]["digest"])))
uncompressed = []
for layer in manifest["layers"]:  # gzip's ISIZE is mod 2^32: count instead
    with gzip.open(blob(layer["digest"])) as stream:
        size = 0
        while chunk := stream.read(1 << 20):
            size += len(chunk)
    uncompressed.append(size)
history = [h for h in config["history"] if not h.get("empty_layer")]
print(json.dumps({
    "name": name, "repository": repository, "tag": f"{repository}:{tag}",
    "ociArchive": stem + ".oci.tar", "dockerArchive": stem + ".docker.tar",
    "manifestDigest": descriptor["digest"], "configDigest": manifest["config"]["digest"],
    "layers": [{"digest": l["digest"], "compressedBytes": l["size"], "uncompressedBytes": u, "createdBy": h.get("created_by", "")}
               for l, u, h in zip(manifest["layers"], uncompressed, history)],
    "compressedBytes": sum(l["size"] for l in manifest["layers"]),
    "uncompressedBytes": sum(uncompressed),
    "ociArchiveBytes": os.path.getsize(stem + ".oci.tar"),
    "dockerArchiveBytes": os.path.getsize(stem + ".docker.tar"),
    "buildSeconds": int(seconds),
    "config": config["config"],
}, indent=2))
PY
  mv "$stem.json.tmp" "$stem.json"
  rm -rf "$work"
  # Earlier builds of this image.
  find "$OUT" -maxdepth 1 -type f -name "$name-*" ! -name "$(basename "$stem").*" -delete
  log "$repository:$tag built in $((SECONDS - t)) s"
}

# Builds NAME unless an archive of the same key exists; prints its summary's path.
image() { # NAME REPOSITORY TAG WHAT CONFIG...
  local name="$1" repository="$2" tag="$3" what="$4" rootfs_dir key stem files
  shift 4
  rootfs_dir="$(rootfs "$name")"
  case "$name" in
    redis) files=("$DIR/redis.conf") ;;
    kafka) files=("$KAFKA_JARS" "$DIR/kafka-entrypoint.sh" "$DIR/kafka-log4j.properties") ;;
  esac
  key="$(image_key "$name" "$rootfs_dir" "${files[@]}")"
  stem="$OUT/$name-$tag-$key"
  if ! cached_summary "$stem" >/dev/null; then
    log "assembling $repository:$tag"
    build_image "$name" "$repository" "$tag" "$rootfs_dir" "$stem" "$what" "$@" </dev/null >&2
  fi
  echo "$stem.json"
}

redis_summary="$(image redis "$REDIS_REPOSITORY" "$REDIS_TAG" \
  "redis-server $REDIS_DEBIAN_VERSION (Debian $DEBIAN_SUITE), /etc/redis/docservice.conf: appendonly, dir /data" \
  --config.env "PATH=/usr/local/bin:/usr/bin:/bin" \
  --config.workingdir /data --config.volume /data --config.exposedports 6379/tcp \
  --config.entrypoint /usr/bin/redis-server --config.entrypoint /etc/redis/docservice.conf)"
kafka_summary="$(image kafka "$KAFKA_REPOSITORY" "$KAFKA_TAG" \
  "Kafka $KAFKA_VERSION (scripts/testenv/kafka-jars.txt), single-node KRaft entrypoint" \
  --config.env "PATH=/opt/kafka/bin:/usr/local/bin:/usr/bin:/bin" --config.env "JAVA_HOME=$JAVA_HOME" \
  --config.env "KAFKA_VERSION=$KAFKA_VERSION" \
  --config.workingdir /var/lib/kafka --config.volume /var/lib/kafka \
  --config.exposedports 9092/tcp \
  --config.entrypoint /opt/kafka/bin/kafka-entrypoint)"

log "done in $((SECONDS - started)) s"
print_result "$redis_summary" "$kafka_summary"
