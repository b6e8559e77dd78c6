#!/usr/bin/env bash
# Builds the two images the test cluster runs beside DocService, without a
# Docker daemon and without pulling a base image (with scripts/image/lib.sh, as
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
# A failure inside $(...) stops the build too (bash clears -e there otherwise):
# the root filesystems and images are built in command substitutions.
shopt -s inherit_errexit
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="$HERE/cluster-images"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$HERE/../.." && pwd)"
source "$ROOT/scripts/install/lib.sh"
source "$ROOT/scripts/image/lib.sh"
IMAGE_LIB="$ROOT/scripts/image/lib.sh"

builder_args cluster-images.sh "$@"
# images.env, each value overridable from the environment.
load_env "$DIR/images.env"
OUT="$CACHE/images/testenv"
mkdir -p "$OUT/rootfs"
# One build at a time (a test and the end-to-end test may start together).
build_lock "$OUT/.lock"
started=$SECONDS

# mmdebstrap builds the root filesystems; umoci assembles OCI layouts; jq names
# them for containerd; skopeo writes the docker-archives (and checks the OCI
# ones); runc runs them (test/integration/cluster-images.test.ts).
apt_install mmdebstrap umoci jq skopeo runc

# --- root filesystems (scripts/image/lib.sh's rootfs_dir) ------------------------
# What the root filesystem of NAME is made from.
rootfs_files() { # NAME
  printf '%s\n' "$DIR/rootfs.sh" "$DIR/rootfs-customize.sh" "$DIR/packages-$1.txt" "$DIR/packages-$1.lock"
}
# DIR/layer.tar, of the root filesystem rootfs.sh builds (the layer tar is all that is used).
rootfs_build() { # NAME DIR [--repin]
  bash "$DIR/rootfs.sh" "$1" "$2" ${3:+"$3"}
  layer_tar "$2/rootfs" "$2/layer.tar" "$DEBIAN_PINNED_AT"
  rm -rf "$2/rootfs"
}
[[ -z "$REPIN" ]] || repin "$DIR/images.env" "$OUT/rootfs" redis kafka

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
PINNED="$(iso_time "$DEBIAN_PINNED_AT")"

# --- the image cache ------------------------------------------------------------------
# An image's key: its root filesystem, its own files, this script and the library.
image_key() { # NAME DEBIAN-DIR FILES...
  local name="$1" debian_dir="$2"
  shift 2
  { echo "$name $debian_dir $REDIS_REPOSITORY $KAFKA_REPOSITORY $REDIS_TAG $KAFKA_TAG $IMAGE_UID $PINNED"
    skopeo --version; umoci --version; cat "$SELF" "$IMAGE_LIB" "$@"; } | sha 16
}
# The summary JSON of an image whose archives all exist, else nothing.
cached_summary() { # STEM
  [[ -f "$1.json" && -f "$1.oci.tar" && -f "$1.docker.tar" ]] && echo "$1.json"
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
# Builds NAME from its root filesystem and staged layer into STEM.{oci,docker}.tar
# and STEM.json; CONFIG: more `umoci config` options.
build_image() { # NAME REPOSITORY TAG DEBIAN-DIR STEM WHAT CONFIG...
  local name="$1" repository="$2" tag="$3" debian_dir="$4" stem="$5" what="$6"
  shift 6
  local work="$OUT/work-$name" t=$SECONDS
  rm -rf "$work" && mkdir -p "$work/stage"
  "stage_$name" "$work/stage"
  layer_tar "$work/stage" "$work/files.tar" "$DEBIAN_PINNED_AT"

  local layout="$work/oci"
  umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  add_layer "$layout:$tag" "$debian_dir/layer.tar" "$PINNED" \
    "Debian $DEBIAN_SUITE root filesystem: scripts/testenv/cluster-images/packages-$name.lock"
  add_layer "$layout:$tag" "$work/files.tar" "$PINNED" "$what"
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
  oci_archive "$layout" "$stem.oci.tar" "$DEBIAN_PINNED_AT"
  skopeo --insecure-policy inspect --raw "oci-archive:$stem.oci.tar" >/dev/null
  docker_archive "$layout:$tag" "$stem.docker.tar" "$repository:$tag"
  image_json "$layout" "$tag" "$name" "$repository" "$tag" "docker.io/$repository:$tag" "$stem" "$((SECONDS - t))" >"$stem.json.tmp"
  mv "$stem.json.tmp" "$stem.json"
  rm -rf "$work"
  # Earlier builds of this image.
  find "$OUT" -maxdepth 1 -type f -name "$name-*" ! -name "$(basename "$stem").*" -delete
  log "$repository:$tag built in $((SECONDS - t)) s"
}

# Builds NAME unless an archive of the same key exists; prints its summary's path.
image() { # NAME REPOSITORY TAG WHAT CONFIG...
  local name="$1" repository="$2" tag="$3" what="$4" debian_dir key stem files
  shift 4
  debian_dir="$(rootfs_dir "$OUT/rootfs" "$name")"
  case "$name" in
    redis) files=("$DIR/redis.conf") ;;
    kafka) files=("$KAFKA_JARS" "$DIR/kafka-entrypoint.sh" "$DIR/kafka-log4j.properties") ;;
  esac
  key="$(image_key "$name" "$debian_dir" "${files[@]}")"
  stem="$OUT/$name-$tag-$key"
  if ! cached_summary "$stem" >/dev/null; then
    log "assembling $repository:$tag"
    build_image "$name" "$repository" "$tag" "$debian_dir" "$stem" "$what" "$@" </dev/null >&2
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
print_archives 8 tag 44 "$redis_summary" "$kafka_summary"
