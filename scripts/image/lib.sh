# shellcheck shell=bash
# Shared by the builders of container images without a Docker daemon and
# without a base image (mmdebstrap, umoci, skopeo):
#   scripts/image/build.sh                DocService's core and conversion images
#   scripts/testenv/cluster-images.sh     the test cluster's Redis and Kafka images
# and by their rootfs.sh (the mmdebstrap run) and rootfs-customize.sh (its
# customize hook). Sourced, not run: it only defines functions. They expect
# `set -euo pipefail`, `shopt -s inherit_errexit` (rootfs_dir runs in $(...))
# and the die/log of the builder that sources it, and read the settings of its
# env file (DEBIAN_SUITE, DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR,
# DEBIAN_PINNED_AT, IMAGE_UID) from the environment.
#
# A builder defines two functions for rootfs_dir and repin:
#   rootfs_files NAME            the files NAME's root filesystem is made from, one a line
#   rootfs_build NAME DIR [--repin]  fills DIR: DIR/layer.tar (and what else it keeps)

# --- settings -------------------------------------------------------------------

# The builder's arguments: none, or --repin (REPIN=--repin). It runs as root.
# shellcheck disable=SC2034 # REPIN is the builder's
builder_args() { # SCRIPT ARG...
  local script="$1" arg
  shift
  REPIN=""
  for arg in "$@"; do
    case "$arg" in
      --repin) REPIN=--repin ;;
      *) die "$script: unknown argument $arg (expected --repin)" ;;
    esac
  done
  [[ $EUID -eq 0 ]] || die "$script runs as root (mmdebstrap --mode=root, chroot)"
}

# The KEY=value lines of FILE as exported variables, each overridable from the
# environment (a variable already set wins).
load_env() { # FILE
  local key value
  while IFS='=' read -r key value; do
    [[ "$key" =~ ^[A-Z_]+$ ]] || continue
    [[ -n "${!key:-}" ]] || printf -v "$key" '%s' "$value"
    export "${key?}"
  done <"$1"
}

# One build at a time per cache directory (a developer's and a test's, or two
# tests, may start together): holds FILE's lock on fd 9 until the builder exits.
build_lock() { # FILE
  exec 9>"$1"
  flock -n 9 || { log "waiting for another image build to finish"; flock 9; }
}

# The first N (all 64) hex digits of stdin's sha256.
sha() { sha256sum | cut -c1-"${1:-64}"; }
# name=version lines of package lists and locks (comments and blank lines dropped).
pins() { sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$@"; }
# EPOCH (seconds) as the images' times are written: 2026-11-25T03:54:35Z.
iso_time() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# PATH relative to the checkout, for messages.
repo_path() { # PATH
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  echo "${1#"$root"/}"
}

# --- root filesystems (rootfs.sh, rootfs-customize.sh) --------------------------

# rootfs.sh's messages (debian_rootfs runs there, not in the builder).
rootfs_log() { echo "rootfs.sh: $*" >&2; }
rootfs_die() { rootfs_log "$@"; exit 1; }

# Builds OUT/rootfs with mmdebstrap: the suite's Essential set, merged /usr, the
# packages pinned in LIST... (name=version), without documentation, manuals and
# translations. OPTION...: more mmdebstrap options (the customize hook, which
# writes OUT/installed.txt with rootfs_installed). Then compares what was
# installed with LOCK and stops when they differ (Debian's archive replaced a
# pinned version). With REPIN=--repin it installs the newest versions of the
# lists' packages instead and rewrites the last LIST (the others are those it
# extends, repinned before it) and LOCK. BUILDER: the script that repins
# (relative to the checkout); WHAT: the layer(s) LOCK pins, for its header.
debian_rootfs() { # NAME OUT LOCK BUILDER WHAT REPIN OPTION... -- LIST...
  local name="$1" out="$2" lock="$3" builder="$4" what="$5" repin="$6" options=() includes=() pin list
  shift 6
  while [[ $# -gt 0 && "$1" != -- ]]; do options+=("$1"); shift; done
  [[ $# -gt 1 ]] || rootfs_die "debian_rootfs: no -- LIST..."
  shift
  : "${DEBIAN_SUITE:?}" "${DEBIAN_MIRROR:?}" "${DEBIAN_SECURITY_MIRROR:?}" "${DEBIAN_PINNED_AT:?}" "${IMAGE_UID:?}"
  for list in "$@"; do [[ -f "$list" ]] || rootfs_die "no $list"; done
  if [[ "$repin" == --repin ]]; then
    while read -r pin; do includes+=("${pin%%=*}"); done < <(pins "$@")
  else
    [[ -f "$lock" ]] || rootfs_die "no $lock: run bash $builder --repin"
    # The lock pins the dependencies too, so apt resolves the same set.
    while read -r pin; do includes+=("$pin"); done < <(pins "$@" "$lock" | LC_ALL=C sort -u)
  fi

  rm -rf "$out/rootfs" "$out/installed.txt"
  mkdir -p "$out/rootfs"
  # The hooks inherit these; SOURCE_DATE_EPOCH also makes dpkg, pip and
  # mmdebstrap itself write reproducible times and byte-code.
  export SOURCE_DATE_EPOCH="$DEBIAN_PINNED_AT" IMAGE_UID INSTALLED_LIST="$out/installed.txt"
  mmdebstrap --mode=root --variant=essential --format=directory --quiet \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --include="$(IFS=,; echo "${includes[*]}")" "${options[@]}" \
    "$DEBIAN_SUITE" "$out/rootfs" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $DEBIAN_SUITE-security main" >"$out/mmdebstrap.log" 2>&1 ||
    { tail -40 "$out/mmdebstrap.log" >&2; rootfs_die "mmdebstrap failed (log: $out/mmdebstrap.log)"; }
  # Containers get /dev from the runtime; the layer carries only the directory.
  find "$out/rootfs/dev" -mindepth 1 -delete
  [[ -s "$out/installed.txt" ]] || rootfs_die "the customize hook did not run"

  if [[ "$repin" == --repin ]]; then
    list="${*: -1}"
    repinned_list "$list" "$out/installed.txt" >"$list.tmp.$$" || { rm -f "$list.tmp.$$"; rootfs_die "$list not rewritten"; }
    mv "$list.tmp.$$" "$list"
    { echo "# Every package in $what, as installed: written by"
      echo "# \`bash $builder --repin\`, checked by every build. Do not edit."
      cat "$out/installed.txt"; } >"$lock"
    rootfs_log "pinned $(wc -l <"$out/installed.txt") packages in $lock"
  elif ! diff <(pins "$lock") "$out/installed.txt" >"$out/lock.diff"; then
    rootfs_log "the $name root filesystem differs from $lock (< pinned, > installed):"
    cat "$out/lock.diff" >&2
    rootfs_die "Debian's archive no longer serves a pinned version: run \`bash $builder --repin\` and commit $(repo_path "$(dirname "$lock")")/packages-*"
  fi
}

# LIST with the versions of INSTALLED (name=version lines); its comments and
# order kept. Fails when a package of LIST was not installed.
repinned_list() { # LIST INSTALLED
  local line package version
  while IFS= read -r line; do
    package="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e 's/=.*//' <<<"$line")"
    if [[ -z "$package" ]]; then echo "$line"; continue; fi
    version="$(awk -v name="$package" 'index($0, name "=") == 1 { print substr($0, length(name) + 2) }' "$2")"
    [[ -n "$version" ]] || { rootfs_log "$package was not installed"; return 1; }
    echo "$package=$version"
  done <"$1"
}

# In the customize hook: the image's user NAME. Numeric in the image config
# (runAsNonRoot checks the number); named here so tools that print user names
# (ps, ls) show one. No password, no login shell.
rootfs_user() { # ROOT NAME GECOS HOME
  grep -q "^$2:" "$1/etc/passwd" ||
    echo "$2:x:$IMAGE_UID:$IMAGE_UID:$3:$4:/usr/sbin/nologin" >>"$1/etc/passwd"
  grep -q "^$2:" "$1/etc/group" || echo "$2:x:$IMAGE_UID:" >>"$1/etc/group"
}

# In the customize hook: removes what only the build wrote (logs, caches, -old
# files; PATH...: more, relative to ROOT), so that two builds from the same pins
# give the same files, and clamps file times: nothing newer than the pin time
# (the layer tar clamps the same way).
rootfs_tidy() { # ROOT [PATH...]
  local root="$1" extra=() path
  shift
  for path in "$@"; do extra+=("$root/$path"); done
  rm -rf "$root"/var/log/* "$root"/var/cache/ldconfig/aux-cache "$root"/var/lib/dpkg/*-old \
    "$root"/var/cache/debconf/*-old "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* \
    "$root"/tmp/* "$root"/var/tmp/* "$root"/root/.cache "${extra[@]}"
  # (/proc, /sys and /dev are mounted while the hook runs: not ours to touch.)
  find "$root" -xdev \( -path "$root/proc" -o -path "$root/sys" -o -path "$root/dev" \) -prune -o \
    -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

# In the customize hook: what is installed, for debian_rootfs to compare with the lock.
rootfs_installed() { # ROOT
  chroot "$1" dpkg-query -W -f '${Package}=${Version}\n' | LC_ALL=C sort >"$INSTALLED_LIST"
}

# --- the root filesystem cache (the builders) -------------------------------------

# The key of NAME's root filesystem: the files `rootfs_files NAME` lists, the
# settings, mmdebstrap's version and the recipe of this library (its functions
# that shape a root filesystem, not the whole file: a change to the image
# assembly below does not rebuild the root filesystems).
rootfs_key() { # NAME
  local files
  mapfile -t files < <(rootfs_files "$1")
  { mmdebstrap --version
    echo "$DEBIAN_SUITE $DEBIAN_MIRROR $DEBIAN_SECURITY_MIRROR $DEBIAN_PINNED_AT $IMAGE_UID"
    declare -f debian_rootfs repinned_list rootfs_user rootfs_tidy rootfs_installed layer_tar reproducible_tar
    cat "${files[@]}" 2>/dev/null || true; } | sha 16
}

# Prints the directory of NAME's root filesystem, CACHE/NAME-KEY, built with
# `rootfs_build NAME DIR` unless it was before; NAME's older directories are
# removed. With --repin it is built from the Debian archive's current versions,
# which rewrites NAME's pins, and kept under the key of the new pins.
rootfs_dir() { # CACHE NAME [--repin]
  local cache="$1" name="$2" repin="${3:-}" dir t=$SECONDS
  dir="$cache/$name-$(rootfs_key "$name")"
  if [[ -n "$repin" ]]; then
    local tmp="$cache/repin-$name"
    rm -rf "$tmp"
    log "repinning the $name root filesystem (mmdebstrap $DEBIAN_SUITE: a minute or more)"
    rootfs_build "$name" "$tmp" --repin >&2
    dir="$cache/$name-$(rootfs_key "$name")"
    rm -rf "$dir"
    touch "$tmp/.done"
    mv -T "$tmp" "$dir"
  elif [[ ! -f "$dir/.done" ]]; then
    log "building the $name root filesystem (mmdebstrap $DEBIAN_SUITE: a minute or more)"
    rm -rf "$dir"
    rootfs_build "$name" "$dir" >&2
    touch "$dir/.done"
    log "$name root filesystem built in $((SECONDS - t)) s"
  fi
  find "$cache" -mindepth 1 -maxdepth 1 -name "$name-*" ! -path "$dir" -exec rm -rf {} +
  echo "$dir"
}

# --repin: the Debian archive's current versions into the package lists and
# locks of NAME..., in order (a list that extends another comes after it), and
# the time now into ENV-FILE's DEBIAN_PINNED_AT (and the environment).
repin() { # ENV-FILE CACHE NAME...
  local env="$1" cache="$2" name
  shift 2
  log "repinning: the Debian archive's current versions, pin time now"
  sed -i "s/^DEBIAN_PINNED_AT=.*/DEBIAN_PINNED_AT=$(date +%s)/" "$env"
  DEBIAN_PINNED_AT="$(sed -n 's/^DEBIAN_PINNED_AT=//p' "$env")"
  export DEBIAN_PINNED_AT
  for name in "$@"; do rootfs_dir "$cache" "$name" --repin >/dev/null; done
  log "pins written: review and commit $(repo_path "$(dirname "$env")")/packages-* and $(basename "$env")"
}

# --- layers and archives -------------------------------------------------------------

# `tar --create` of DIR into OUT, reproducibly: POSIX format without atime and
# ctime, numeric owners, file times EPOCH; ARG...: more options and the entries.
reproducible_tar() { # DIR OUT EPOCH ARG...
  local dir="$1" out="$2" epoch="$3"
  shift 3
  tar --create --file "$out.tmp" --directory "$dir" --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$epoch" --numeric-owner "$@"
  mv "$out.tmp" "$out"
}

# A layer tar of DIR's entries (all of it, sorted, or the NUL-separated LIST):
# file times clamped to EPOCH, owners as they are.
layer_tar() { # DIR OUT EPOCH [LIST]
  if [[ -n "${4:-}" ]]; then
    reproducible_tar "$1" "$2" "$3" --clamp-mtime --null --no-recursion -T "$4"
  else
    reproducible_tar "$1" "$2" "$3" --clamp-mtime --sort=name .
  fi
}

# A layer from TAR on top of the image LAYOUT:REF, with its history entry.
add_layer() { # LAYOUT:REF TAR CREATED CREATED-BY
  umoci raw add-layer --image "$1" --history.created "$3" --history.created_by "$4" "$2"
}

# OUT: the OCI layout LAYOUT as an OCI archive, tarred reproducibly (skopeo's
# oci-archive writer stamps the time of the copy on every entry).
oci_archive() { # LAYOUT OUT EPOCH
  reproducible_tar "$1" "$2" "$3" --sort=name --owner=0 --group=0 --mode=u+rw,go+r,go-w oci-layout index.json blobs
}

# OUT: the image LAYOUT:REF as a docker-archive whose image is called NAME.
docker_archive() { # LAYOUT:REF OUT NAME
  rm -f "$2.tmp"
  skopeo --insecure-policy copy --quiet "oci:$1" "docker-archive:$2.tmp:$3" >&2
  mv "$2.tmp" "$2"
}

# The summary (JSON) of the image LAYOUT:REF, archived as STEM.oci.tar and
# STEM.docker.tar: its tag REPOSITORY:TAG, REFERENCE (the name inside the
# archives), digests, sizes, layers with their history, config (and
# buildSeconds when SECONDS is given).
image_json() { # LAYOUT REF NAME REPOSITORY TAG REFERENCE STEM [SECONDS]
  python3 - "$@" <<'EOF'
import gzip, json, os, sys
layout, ref, name, repository, tag, reference, stem, *seconds = sys.argv[1:]
blob = lambda digest: os.path.join(layout, "blobs", *digest.split(":"))
index = json.load(open(os.path.join(layout, "index.json")))
descriptor = next(m for m in index["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == ref)
manifest = json.load(open(blob(descriptor["digest"])))
config = json.load(open(blob(manifest["config"]["digest"])))
layers = manifest["layers"]
uncompressed = []
for layer in layers:  # sizes of the uncompressed tars (gzip's ISIZE is mod 2^32: count instead)
    with gzip.open(blob(layer["digest"])) as stream:
        size = 0
        while chunk := stream.read(1 << 20):
            size += len(chunk)
    uncompressed.append(size)
print(json.dumps({
    "name": name, "repository": repository, "tag": f"{repository}:{tag}", "reference": reference,
    "ociArchive": stem + ".oci.tar", "dockerArchive": stem + ".docker.tar",
    "manifestDigest": descriptor["digest"], "configDigest": manifest["config"]["digest"],
    "layers": [{"digest": l["digest"], "compressedBytes": l["size"], "uncompressedBytes": u, "createdBy": h.get("created_by", "")}
               for l, u, h in zip(layers, uncompressed, [h for h in config["history"] if not h.get("empty_layer")])],
    "compressedBytes": sum(l["size"] for l in layers),
    "uncompressedBytes": sum(uncompressed),
    "ociArchiveBytes": os.path.getsize(stem + ".oci.tar"),
    "dockerArchiveBytes": os.path.getsize(stem + ".docker.tar"),
    **({"buildSeconds": int(seconds[0])} if seconds else {}),
    "config": config["config"],
}, indent=2))
EOF
}

# The builder's stdout: a line per archive, NAME TAG PATH (columns NAME-WIDTH and
# TAG-WIDTH wide; TAG: the summary's field TAG-FIELD), of the images of each
# SUMMARY (image_json's, or a build's with a list "images"); their sizes to stderr.
print_archives() { # NAME-WIDTH TAG-FIELD TAG-WIDTH SUMMARY...
  python3 - "$@" <<'EOF'
import json, sys
name_width, field, tag_width, *paths = sys.argv[1:]
for path in paths:
    summary = json.load(open(path))
    for image in summary.get("images", [summary]):
        for kind in ("ociArchive", "dockerArchive"):
            print(f'{image["name"]:<{name_width}} {image[field]:<{tag_width}} {image[kind]}')
        print(f'  {image["tag"]}: {image["compressedBytes"] / 1e6:.1f} MB compressed (layers), '
              f'{image["uncompressedBytes"] / 1e6:.1f} MB uncompressed, manifest {image["manifestDigest"]}', file=sys.stderr)
EOF
}
