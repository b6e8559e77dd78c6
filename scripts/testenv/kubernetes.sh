#!/usr/bin/env bash
# Kubernetes for the tests, and the tools around it, all built from the Go
# module proxy (there is no other download here) or installed from Debian.
# Called by setup.sh.
#
#   $BIN/kube-apiserver, kube-controller-manager,   k8s.io/kubernetes (cmd/...)
#        kube-scheduler, kubelet, kube-proxy, kubectl
#   $BIN/etcd                           go.etcd.io/etcd/server/v3 (3.5: main package at the module root)
#   $BIN/coredns                        github.com/coredns/coredns (main package at the module root)
#   $BIN/helm                           helm.sh/helm/v3/cmd/helm
#   $BIN/k6                             go.k6.io/k6
#   $BIN/metrics-server                 sigs.k8s.io/metrics-server/cmd/metrics-server (what HPAs read)
#   $BIN/keda-operator, keda-adapter    github.com/kedacore/keda/v2 (cmd/operator, cmd/adapter)
#   $CACHE/keda-crds/keda-crds.yaml     KEDA's CRDs, from the same module (config/crd,
#                                       kustomized as in KEDA's release keda-<version>-crds.yaml)
#   $CACHE/prometheus-operator-crds/    the Prometheus Operator's PodMonitor and PrometheusRule CRDs
#     prometheus-operator-crds.yaml     (github.com/prometheus-operator/prometheus-operator example/prometheus-operator-crd)
#   containerd, runc, CNI plugins       Debian packages, for the test node
#   $CACHE/kube-node-images/pause.tar   OCI archives the test node imports: the pod sandbox
#   $CACHE/kube-node-images/coredns.tar (registry.k8s.io/pause:3.10, from pause/pause.c) and CoreDNS
#
# test/support/kube.ts starts etcd and kube-apiserver alone;
# test/support/kube-node.ts starts a whole single-node cluster;
# test/support/keda.ts runs KEDA beside either. Each binary is
# built from a wrapper module under kubernetes/ whose go.sum pins every module
# (see go_build_pinned in ../install/lib.sh). k8s.io/kubernetes is not meant
# to be a dependency: its go.mod requires its staging modules (k8s.io/api,
# client-go, ...) at v0.0.0 and replaces them with ./staging, so the wrapper
# replaces each with its published v0.<minor>.<patch>.
#
# The Go module and build caches live under $CACHE/go (not ~/go), so the whole
# cache is one directory to keep. Building from an empty cache on 2 cores:
# etcd, kube-apiserver, kubectl, helm and k6 took about 11.5 min
# (kube-apiserver alone about 6); with an empty build cache (modules already
# downloaded) and other builds running beside them, one after the other:
# kubelet 8.2 min, then kube-proxy 0.4, kube-scheduler 0.4,
# kube-controller-manager 3.8, CoreDNS 2.8; keda-operator 5.5 (7.6 beside a
# load test), then keda-adapter 1.2. The two images take about 2 s. A run with
# everything built only checks each binary's version and each image's stamp
# (about 0.7 s).
#
# `bash kubernetes.sh lock` rewrites the wrappers' go.mod and go.sum after a
# version below changes (it needs the Go module proxy).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
source "$HERE/../install/lib.sh"

# v1.34 is the API that @kubernetes/client-node 1.4 is generated from; it still
# supports etcd 3.5.
KUBERNETES_VERSION=v1.34.4
ETCD_VERSION=v3.5.35
HELM_VERSION=v3.22.0
K6_VERSION=v1.8.1
# v1.12.4 is the last 1.12 release on the Go module proxy.
COREDNS_VERSION=v1.12.4
METRICS_SERVER_VERSION=v0.8.0
# Its operator, its metrics adapter and its CRDs; the module's hash is the keda wrapper's go.sum's.
KEDA_VERSION=v2.21.0
# The only version of the Prometheus Operator's root module that the Go module
# proxy lists (later releases are there only for its pkg/apis/monitoring
# submodule, which has no CRD files); go.sum's hash (only its YAML is used, so
# it is no wrapper's dependency).
PROMETHEUS_OPERATOR_VERSION=v0.85.0
PROMETHEUS_OPERATOR_SUM="h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s="

WRAPPERS="$HERE/kubernetes"
NODE_IMAGES="$CACHE/kube-node-images"
export GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build"
# -modcacherw: the module cache can be deleted with rm -rf like the rest of $CACHE.
export GOFLAGS="-modcacherw" GOWORK=off GOTOOLCHAIN=local GOSUMDB=off

# Wrapper module directory, module path and package of each binary.
declare -A MODULE=(
  [etcd]=go.etcd.io/etcd/server/v3 [helm]=helm.sh/helm/v3 [k6]=go.k6.io/k6 [coredns]=github.com/coredns/coredns
  [metrics-server]=sigs.k8s.io/metrics-server
)
declare -A PACKAGE=(
  [etcd]=go.etcd.io/etcd/server/v3 [helm]=helm.sh/helm/v3/cmd/helm [k6]=go.k6.io/k6 [coredns]=github.com/coredns/coredns
  [metrics-server]=sigs.k8s.io/metrics-server/cmd/metrics-server
)
declare -A WRAPPER=([etcd]=etcd [helm]=helm [k6]=k6 [coredns]=coredns [metrics-server]=metrics-server)
declare -A VERSION=(
  [etcd]=$ETCD_VERSION [helm]=$HELM_VERSION [k6]=$K6_VERSION [coredns]=$COREDNS_VERSION [metrics-server]=$METRICS_SERVER_VERSION
)
# The commands of k8s.io/kubernetes, all from one wrapper module.
KUBERNETES_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
for name in "${KUBERNETES_COMMANDS[@]}"; do
  MODULE[$name]=k8s.io/kubernetes PACKAGE[$name]=k8s.io/kubernetes/cmd/$name
  WRAPPER[$name]=kubernetes VERSION[$name]=$KUBERNETES_VERSION
done
# KEDA's two commands, from one wrapper module too.
KEDA_COMMANDS=(keda-operator keda-adapter)
for name in "${KEDA_COMMANDS[@]}"; do
  MODULE[$name]=github.com/kedacore/keda/v2 PACKAGE[$name]=github.com/kedacore/keda/v2/cmd/${name#keda-}
  WRAPPER[$name]=keda VERSION[$name]=$KEDA_VERSION
done

# What `NAME`'s version command prints, given the binary; empty if it does not run.
installed_version() { # NAME BINARY
  case "$1" in
    # "Kubernetes v1.34.4"
    kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy)
      "$2" --version 2>/dev/null | awk '{print $2}' ;;
    # "Client Version: v1.34.4"
    kubectl) "$2" version --client 2>/dev/null | awk '/^Client Version:/ {print $3}' ;;
    # "etcd Version: 3.5.35"
    etcd) "$2" --version 2>/dev/null | awk '/^etcd Version:/ {print "v" $3}' ;;
    # "v3.22.0+g..." (no commit here: "v3.22.0")
    helm) "$2" version --short 2>/dev/null | sed 's/+.*//' ;;
    # "k6 v1.8.1 (commit/devel, go1.26.8, linux/amd64)"
    k6) "$2" version 2>/dev/null | awk 'NR==1 {print $2}' ;;
    # "CoreDNS-1.12.4"
    coredns) "$2" -version 2>/dev/null | sed -n '1s/^CoreDNS-/v/p' ;;
    # "v0.8.0" (its release builds stamp it where client-go's version goes)
    metrics-server) "$2" --version 2>/dev/null | head -1 ;;
    # No version flag: the module its build info says it was built from
    # ("mod github.com/kedacore/keda/v2 v2.21.0 h1:...", tab-separated).
    keda-*) go version -m "$2" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/kedacore/keda/v2" {print $3}' ;;
  esac
}

# Link-time version stamps, as the projects' own release builds set them.
ldflags() { # NAME
  local v="${VERSION[$1]}" minor
  case "$1" in
    kube-* | kubelet | kubectl)
      minor="${v#v1.}" minor="${minor%%.*}"
      local flags="" pkg
      for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
      done
      echo "$flags" ;;
    helm) echo "-X helm.sh/helm/v3/internal/version.version=$v -X helm.sh/helm/v3/internal/version.gitTreeState=clean" ;;
    metrics-server) echo "-X k8s.io/client-go/pkg/version.gitVersion=$v" ;;
    # What its startup log prints ("KEDA Version: 2.21.0", "Git Commit: v2.21.0").
    keda-*) echo "-X github.com/kedacore/keda/v2/version.Version=${v#v} -X github.com/kedacore/keda/v2/version.GitCommit=$v" ;;
  esac
}

setup_binary() { # NAME
  local name="$1" version="${VERSION[$1]}" dir="$WRAPPERS/${WRAPPER[$1]}"
  [[ "$(go_mod_version "$dir" "${MODULE[$name]}")" == "$version" ]] ||
    die "$dir/go.mod does not require ${MODULE[$name]} $version: run bash $SELF lock"
  # The version check also catches a binary that no longer runs.
  [[ "$(installed_version "$name" "$BIN/$name-$version")" == "$version" ]] || {
    go_build_pinned "$name" "$version" "$dir" "${PACKAGE[$name]}" "$(ldflags "$name")"
    [[ "$(installed_version "$name" "$BIN/$name-$version")" == "$version" ]] ||
      die "$BIN/$name-$version does not report version $version"
  }
  link_bin "$name" "$name-$version"
  report "$name" "$version" "$BIN/$name-$version"
}

# Prints the module cache directory of MODULE@VERSION after checking its go.sum hash.
download_module() { # MODULE VERSION SUM
  local json dir sum
  json="$(cd "$CACHE" && go mod download -json "$1@$2")" || die "go mod download $1@$2 failed"
  dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json")"
  sum="$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$json")"
  [[ "$sum" == "$3" ]] || die "$1@$2 has hash ${sum:-(none)}, $SELF pins $3"
  echo "$dir"
}

# KEDA's CRDs as its release ships them: config/crd/bases with the patches of
# config/crd/kustomization.yaml applied (kubectl's built-in kustomize), from
# the module version (and hash) that keda-operator is built from.
setup_keda_crds() {
  local sum
  # "github.com/kedacore/keda/v2 v2.21.0 h1:..." (the other line is the hash of its go.mod)
  sum="$(awk -v version="$KEDA_VERSION" '$1 == "github.com/kedacore/keda/v2" && $2 == version {print $3}' "$WRAPPERS/keda/go.sum")"
  [[ -n "$sum" ]] || die "$WRAPPERS/keda/go.sum lacks github.com/kedacore/keda/v2 $KEDA_VERSION: run bash $SELF lock"
  local home="$CACHE/keda-crds-$KEDA_VERSION" stamp="$sum $KUBERNETES_VERSION" tmp source
  if [[ "$(cat "$home/.installed" 2>/dev/null)" != "$stamp" ]]; then
    log "copying KEDA $KEDA_VERSION's CRDs from the Go module (first time only)"
    source="$(download_module github.com/kedacore/keda/v2 "$KEDA_VERSION" "$sum")"
    tmp="$home.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    "$BIN/kubectl" kustomize "$source/config/crd" >"$tmp/keda-crds.yaml" || { rm -rf "$tmp"; die "kubectl kustomize of KEDA's config/crd failed"; }
    grep -q '^  name: scaledobjects.keda.sh$' "$tmp/keda-crds.yaml" || { rm -rf "$tmp"; die "KEDA's CRDs lack scaledobjects.keda.sh"; }
    echo "$stamp" >"$tmp/.installed"
    rm -rf "$home"
    mv -T "$tmp" "$home"
  fi
  ln -sfn "keda-crds-$KEDA_VERSION" "$CACHE/keda-crds.tmp.$$"
  mv -fT "$CACHE/keda-crds.tmp.$$" "$CACHE/keda-crds"
  report keda-crds "$KEDA_VERSION" "$CACHE/keda-crds/keda-crds.yaml"
}

# The two CRDs of the Prometheus Operator that the chart's monitoring objects
# use (test/integration/monitoring-rules.test.ts applies the chart with them),
# as its releases ship them (example/prometheus-operator-crd).
setup_prometheus_operator_crds() {
  local home="$CACHE/prometheus-operator-crds-$PROMETHEUS_OPERATOR_VERSION" stamp="$PROMETHEUS_OPERATOR_SUM" tmp source crd
  if [[ "$(cat "$home/.installed" 2>/dev/null)" != "$stamp" ]]; then
    log "copying the Prometheus Operator $PROMETHEUS_OPERATOR_VERSION's CRDs from the Go module (first time only)"
    source="$(download_module github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION" "$PROMETHEUS_OPERATOR_SUM")"
    tmp="$home.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # Each file starts with "---", so they concatenate into one multi-document file.
    for crd in podmonitors prometheusrules; do
      cat "$source/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" >>"$tmp/prometheus-operator-crds.yaml" ||
        { rm -rf "$tmp"; die "the Prometheus Operator module lacks the $crd CRD"; }
    done
    echo "$stamp" >"$tmp/.installed"
    rm -rf "$home"
    mv -T "$tmp" "$home"
  fi
  ln -sfn "prometheus-operator-crds-$PROMETHEUS_OPERATOR_VERSION" "$CACHE/prometheus-operator-crds.tmp.$$"
  mv -fT "$CACHE/prometheus-operator-crds.tmp.$$" "$CACHE/prometheus-operator-crds"
  report prometheus-operator-crds "$PROMETHEUS_OPERATOR_VERSION" "$CACHE/prometheus-operator-crds/prometheus-operator-crds.yaml"
}

# What the test node (test/support/kube-node.ts) runs beyond the binaries
# above, from Debian: containerd 1.6 (started standalone, no systemd unit),
# runc, the CNI plugins (bridge, host-local, portmap, loopback) and iptables
# (kube-proxy 1.34 clears conntrack entries through netlink: no conntrack
# tool); jq and a static libc for the images below, busybox-static for tests'.
setup_node_runtime() {
  local fresh=0
  command -v containerd >/dev/null || fresh=1
  apt_install containerd runc containernetworking-plugins iptables busybox-static jq gcc libc6-dev
  # The package starts a system containerd where systemd runs; the node starts its own.
  if ((fresh)) && [[ -d /run/systemd/system ]]; then as_root systemctl disable --now containerd >&2 || true; fi
  # "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3"
  report containerd "$(containerd --version | awk '{print $3}')" "$(command -v containerd)"
  # "runc version 1.1.5+ds1"
  report runc "$(runc --version | awk 'NR==1 {print $3}')" "$(command -v runc)"
  report cni-plugins "$(dpkg-query -W -f='${Version}' containernetworking-plugins)" /usr/lib/cni
}

# Builds the OCI archive $NODE_IMAGES/NAME.tar unless its stamp matches STAMP:
# BUILD gets an empty rootfs dir to fill, then oci-archive.sh packs it.
node_image() { # NAME IMAGE STAMP BUILD ENTRYPOINT...
  local name="$1" image="$2" stamp="$3" build="$4" tmp
  shift 4
  local out="$NODE_IMAGES/$name.tar"
  if [[ ! -f "$out" || "$(cat "$out.stamp" 2>/dev/null)" != "$stamp" ]]; then
    log "building the image $image (first time only)"
    tmp="$(mktemp -d)"
    mkdir "$tmp/rootfs"
    "$build" "$tmp/rootfs" || { rm -rf "$tmp"; die "building the image $image failed"; }
    bash "$HERE/oci-archive.sh" "$out" "$image" "$tmp/rootfs" "$@" || { rm -rf "$tmp"; die "packing the image $image failed"; }
    rm -rf "$tmp"
    echo "$stamp" >"$out.stamp"
  fi
  report "$name-image" "${image##*:}" "$out"
}

# The pod sandbox image kubelet and containerd expect, from our own pause.c.
build_pause() { gcc -static -Os -s -Wall -Wextra -Werror -o "$1/pause" "$HERE/pause/pause.c"; }
build_coredns() { cp "$BIN/coredns-$COREDNS_VERSION" "$1/coredns"; }

setup_node_images() {
  local packer
  packer="$(sha256sum "$HERE/oci-archive.sh" | cut -d' ' -f1)"
  mkdir -p "$NODE_IMAGES"
  node_image pause registry.k8s.io/pause:3.10 \
    "$(sha256sum "$HERE/pause/pause.c" | cut -d' ' -f1) $(gcc -dumpfullversion) $packer" build_pause /pause
  node_image coredns "docservice.local/coredns:$COREDNS_VERSION" "$COREDNS_VERSION $packer" build_coredns /coredns
}

# Writes the wrapper module DIR requiring MODULE@VERSION (plus REPLACE and
# EXCLUDE directives, one a line, each after a tab) with a tools.go importing
# PACKAGES, and lets `go mod tidy` write go.sum.
write_wrapper() { # DIR MODULE VERSION REPLACE EXCLUDE PACKAGES...
  local dir="$1" module="$2" version="$3" replace="$4" exclude="$5" package
  shift 5
  mkdir -p "$dir"
  rm -f "$dir/go.mod" "$dir/go.sum"
  {
    echo "module docservice.local/$(basename "$dir")"
    echo
    echo "go 1.22" # go mod tidy raises it to what the dependencies need
    echo
    echo "require $module $version"
    [[ -z "$replace" ]] || printf '\nreplace (\n%s\n)\n' "${replace%$'\n'}"
    [[ -z "$exclude" ]] || printf '\nexclude (\n%s\n)\n' "${exclude%$'\n'}"
  } >"$dir/go.mod"
  {
    printf '//go:build tools\n\n// Generated by `bash scripts/testenv/kubernetes.sh lock`.\npackage tools\n\nimport (\n'
    for package in "$@"; do printf '\t_ "%s"\n' "$package"; done
    printf ')\n'
  } >"$dir/tools.go"
  log "resolving $module $version"
  (cd "$dir" && GOFLAGS="$GOFLAGS -mod=mod" go mod tidy) >&2 || die "go mod tidy in $dir failed"
}

# GOMOD's single-line KEYWORD directives (replace, exclude) as a block's
# lines; dies on a block, which this does not read.
go_mod_directives() { # GOMOD KEYWORD
  ! grep -q "^$2 (" "$1" || die "$1 has a $2 block: read it in $SELF"
  awk -v keyword="$2" '$1 == keyword {sub(/^[a-z]+ /, ""); sub(/[[:space:]]*\/\/.*/, ""); print "\t" $0}' "$1"
}

# The keda wrapper. KEDA's go.mod replaces and excludes modules (a license, a
# vulnerable unused version), which applies only where it is the main module:
# the wrapper repeats them.
lock_keda() {
  local gomod replace exclude name packages=()
  gomod="$(cd "$CACHE" && go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [[ -f "$gomod" ]] || die "cannot download github.com/kedacore/keda/v2 $KEDA_VERSION's go.mod"
  replace="$(go_mod_directives "$gomod" replace)"
  exclude="$(go_mod_directives "$gomod" exclude)"
  for name in "${KEDA_COMMANDS[@]}"; do packages+=("${PACKAGE[$name]}"); done
  write_wrapper "$WRAPPERS/keda" github.com/kedacore/keda/v2 "$KEDA_VERSION" "$replace" "$exclude" "${packages[@]}"
}

# Rewrites the wrappers from the versions above.
lock() {
  local kmod staging replace=""
  kmod="$(cd "$CACHE" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [[ -f "$kmod" ]] || die "cannot download k8s.io/kubernetes $KUBERNETES_VERSION's go.mod"
  # "	k8s.io/api => ./staging/src/k8s.io/api" -> k8s.io/api
  for staging in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$kmod"); do
    replace+="	$staging => $staging v0.${KUBERNETES_VERSION#v1.}"$'\n'
  done
  [[ -n "$replace" ]] || die "no staging replacements in k8s.io/kubernetes $KUBERNETES_VERSION's go.mod"
  local name packages=()
  for name in "${KUBERNETES_COMMANDS[@]}"; do packages+=("${PACKAGE[$name]}"); done
  write_wrapper "$WRAPPERS/kubernetes" k8s.io/kubernetes "$KUBERNETES_VERSION" "$replace" "" "${packages[@]}"
  write_wrapper "$WRAPPERS/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" "" "" "${PACKAGE[etcd]}"
  write_wrapper "$WRAPPERS/helm" helm.sh/helm/v3 "$HELM_VERSION" "" "" "${PACKAGE[helm]}"
  write_wrapper "$WRAPPERS/k6" go.k6.io/k6 "$K6_VERSION" "" "" "${PACKAGE[k6]}"
  write_wrapper "$WRAPPERS/coredns" github.com/coredns/coredns "$COREDNS_VERSION" "" "" "${PACKAGE[coredns]}"
  write_wrapper "$WRAPPERS/metrics-server" sigs.k8s.io/metrics-server "$METRICS_SERVER_VERSION" "" "" "${PACKAGE[metrics-server]}"
  lock_keda
  local sum
  sum="$(cd "$CACHE" && go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
    sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')"
  [[ "$sum" == "$PROMETHEUS_OPERATOR_SUM" ]] ||
    log "the Prometheus Operator $PROMETHEUS_OPERATOR_VERSION's hash is $sum: set PROMETHEUS_OPERATOR_SUM in $SELF"
}

case "${1:-}" in
  lock) lock ;;
  "")
    for name in etcd "${KUBERNETES_COMMANDS[@]}" coredns helm k6 metrics-server "${KEDA_COMMANDS[@]}"; do setup_binary "$name"; done
    setup_keda_crds
    setup_prometheus_operator_crds
    setup_node_runtime
    setup_node_images
    ;;
  *) die "usage: $SELF [lock]" ;;
esac
