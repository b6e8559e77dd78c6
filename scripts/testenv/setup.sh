#!/usr/bin/env bash
# Installs, into a cache shared between runs, what the integration tests need
# beyond the platform's own runtime (scripts/install/runtime.sh). Idempotent; a
# run with everything present takes about a second.
#
# stdout: one line per component, "<name> <version> <path>". Everything else
# (apt, go build, pip) goes to stderr.
#
# To add a component: pin its version (versions.env, or a wrapper go.mod or
# requirements file beside this script), write a setup_<name> function that
# installs it if missing and calls `report`, and call it at the end.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../install/lib.sh"
source "$HERE/versions.env"

# Debian packages start their daemon on install; tests start their own
# instances on random ports, so stop it and keep it from starting at boot.
disable_service() {
  if [[ -d /run/systemd/system ]]; then
    as_root systemctl disable --now "$1" >&2 || true
  else
    as_root service "$1" stop >&2 || true
    as_root update-rc.d "$1" disable >&2 || true
  fi
}

# Checking PDFs (qpdf, pdftotext) and what Gotenberg runs (qpdf, pdftk, exiftool).
setup_pdf_tools() {
  apt_install qpdf poppler-utils pdftk-java libimage-exiftool-perl
  report qpdf "$(qpdf --version | awk 'NR==1{print $3}')" "$(command -v qpdf)"
  report pdftotext "$(pdftotext -v 2>&1 | awk 'NR==1{print $3}')" "$(command -v pdftotext)"
}

# What the docs' shell examples call (test/docs-examples.test.ts runs them).
setup_doc_tools() {
  apt_install curl jq
  report curl "$(curl --version | awk 'NR==1{print $2}')" "$(command -v curl)"
  report jq "$(jq --version | sed 's/^jq-//')" "$(command -v jq)"
}

setup_redis() {
  if ! command -v redis-server >/dev/null; then
    apt_install redis-server
    disable_service redis-server
  fi
  local version
  # "Redis server v=7.0.15 sha=..." -> 7.0.15
  version="$(redis-server --version | sed -n 's/.* v=\([0-9.]*\).*/\1/p')"
  [[ "$version" == "$REDIS_SERIES".* ]] ||
    die "$(command -v redis-server) is redis ${version:-(unknown version)}, tests need $REDIS_SERIES.x (Debian 12 package redis-server)"
  report redis "$version" "$(command -v redis-server)"
}

setup_mailpit() {
  local version
  version="$(go_mod_version "$HERE/mailpit" github.com/axllent/mailpit)"
  [[ "$version" == v* ]] || die "cannot read the mailpit version from $HERE/mailpit/go.mod"
  # The version check also catches a binary that no longer runs.
  "$BIN/mailpit-$version" version --no-release-check 2>/dev/null | grep -q " $version " ||
    go_build_pinned mailpit "$version" "$HERE/mailpit" github.com/axllent/mailpit "-X github.com/axllent/mailpit/config.Version=$version"
  link_bin mailpit "mailpit-$version"
  report mailpit "$version" "$BIN/mailpit-$version"
}

# A minimal OpenTelemetry Collector (OTLP receiver, file exporter), the
# distribution in otelcol/main.go, that the tracing tests export to
# (test/support/otel-collector.ts); its version is the collector release that
# otelcol/go.mod requires.
setup_otelcol() {
  local version
  version="$(go_mod_version "$HERE/otelcol" go.opentelemetry.io/collector/otelcol)"
  [[ "$version" == v* ]] || die "cannot read the collector version from $HERE/otelcol/go.mod"
  # "otelcol version v0.161.0"; the check also catches a binary that no longer runs.
  [[ "$("$BIN/otelcol-$version" --version 2>/dev/null)" == "otelcol version $version" ]] || {
    go_build_pinned otelcol "$version" "$HERE/otelcol" . "-X main.version=$version"
    [[ "$("$BIN/otelcol-$version" --version 2>&1)" == "otelcol version $version" ]] ||
      die "$BIN/otelcol-$version does not report version $version"
  }
  link_bin otelcol "otelcol-$version"
  report otelcol "$version" "$BIN/otelcol-$version"
}

# Gotenberg 8's LibreOffice-only server, plus two tools it runs that Debian lacks:
# pdfcpu (pinned by gotenberg/pdfcpu/go.mod) and unoconv 0.9 from PyPI, standing
# in for Gotenberg's "unoconverter" (an unoconv fork published only on GitHub;
# Debian's unoconv 0.7 lacks the --printer option Gotenberg passes).
setup_gotenberg() {
  local dir="$HERE/gotenberg" version pdfcpu unoconv
  version="$(go_mod_version "$dir" github.com/gotenberg/gotenberg/v8)"
  pdfcpu="$(go_mod_version "$dir/pdfcpu" github.com/pdfcpu/pdfcpu)"
  unoconv="$(sed -n 's/^unoconv==\([^ ]*\) .*/\1/p' "$dir/unoconv-requirements.txt")"
  [[ "$version" == v* && "$pdfcpu" == v* && -n "$unoconv" ]] || die "cannot read the gotenberg/pdfcpu/unoconv versions from $dir"
  [[ -x "$(dirname "$(readlink -f "$(command -v soffice)")")/soffice.bin" ]] || die "no soffice.bin next to soffice"

  # No version flag: the version is in the file name, and --help shows it still runs.
  "$BIN/gotenberg-libreoffice-$version" --help >/dev/null 2>&1 ||
    go_build_pinned gotenberg-libreoffice "$version" "$dir" github.com/gotenberg/gotenberg/v8/cmd/gotenberg-libreoffice \
      "-X github.com/gotenberg/gotenberg/v8/cmd.Version=$version"
  link_bin gotenberg-libreoffice "gotenberg-libreoffice-$version"
  report gotenberg "$version" "$BIN/gotenberg-libreoffice-$version"

  # "-c disable": no config dir is created in $HOME.
  [[ "$("$BIN/pdfcpu-$pdfcpu" version -c disable 2>/dev/null)" == "pdfcpu: $pdfcpu"$'\n'* ]] ||
    go_build_pinned pdfcpu "$pdfcpu" "$dir/pdfcpu" github.com/pdfcpu/pdfcpu/cmd/pdfcpu \
      "-X main.version=$pdfcpu -X github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model.VersionStr=$pdfcpu"
  link_bin pdfcpu "pdfcpu-$pdfcpu"
  report pdfcpu "$pdfcpu" "$BIN/pdfcpu-$pdfcpu"

  pip_tool unoconv "$unoconv" "$dir/unoconv-requirements.txt" "unoconv $unoconv"
}

# SoftHSM2, the PKCS#11 token of the signing tests (test/support/softhsm.ts makes
# a throwaway token per run), OpenSC's pkcs11-tool, which generates the test keys
# on that token and imports their certificates, and openssl for the test CA. No
# daemon: the module is a library loaded by the process that uses it.
setup_softhsm() {
  local module=/usr/lib/softhsm/libsofthsm2.so version
  apt_install softhsm2 opensc openssl
  [[ -f "$module" ]] || die "$module not found (Debian package libsofthsm2)"
  # "2.6.1"
  version="$(softhsm2-util --version 2>/dev/null)" || die "softhsm2-util does not run"
  report softhsm2 "$version" "$module"
  # "OpenSC 0.23.0 [gcc  12.2.0]" -> 0.23.0
  version="$(opensc-tool --info 2>/dev/null | awk 'NR==1{print $2}')"
  [[ -n "$version" ]] && command -v pkcs11-tool >/dev/null || die "pkcs11-tool does not run (Debian package opensc)"
  report pkcs11-tool "$version" "$(command -v pkcs11-tool)"
}

# promtool, which checks and unit-tests the chart's alerts
# (test/integration/monitoring-rules.test.ts); the Prometheus server of the
# package is not used.
setup_prometheus() {
  if ! command -v promtool >/dev/null; then
    apt_install prometheus
    disable_service prometheus
  fi
  # "promtool, version 2.42.0+ds (branch: debian/sid, revision: 2.42.0+ds-5+deb12u1)" -> 2.42.0+ds
  report promtool "$(promtool --version 2>&1 | awk 'NR==1 {print $3}')" "$(command -v promtool)"
}

bash "$HERE/../install/runtime.sh"
setup_pdf_tools
setup_doc_tools
setup_redis
setup_mailpit
setup_otelcol
setup_gotenberg
setup_softhsm
setup_prometheus

# pyHanko from PyPI, an independent PAdES validator for the signing tests
# (`pyhanko sign validate`, test/support/pdf-validators.ts); poppler's pdfsig
# (setup_pdf_tools) is the other. The CLI is the pyhanko-cli package.
setup_pyhanko() {
  local requirements="$HERE/pyhanko-requirements.txt" version cli
  version="$(sed -n 's/^pyhanko==\([^ ]*\) .*/\1/p' "$requirements")"
  cli="$(sed -n 's/^pyhanko-cli==\([^ ]*\) .*/\1/p' "$requirements")"
  [[ -n "$version" && -n "$cli" ]] || die "cannot read the pyhanko/pyhanko-cli versions from $requirements"
  pip_tool pyhanko "$version" "$requirements" "pyHanko, version $version (CLI $cli)"
}

# Schemathesis from PyPI: generates requests from the served /openapi.json and
# checks every answer against it (test/integration/schemathesis.test.ts).
setup_schemathesis() {
  local requirements="$HERE/schemathesis-requirements.txt" version
  version="$(sed -n 's/^schemathesis==\([^ ]*\) .*/\1/p' "$requirements")"
  [[ -n "$version" ]] || die "cannot read the schemathesis version from $requirements"
  pip_tool schemathesis "$version" "$requirements" "schemathesis, version $version"
}
setup_pyhanko
setup_schemathesis
bash "$HERE/kafka.sh"     # Kafka 3.9 (KRaft) from Maven Central jars, on Debian's OpenJDK 17
bash "$HERE/dss.sh"       # the EU's DSS 6.4 from Maven Central jars: dss-validate, a PAdES validator (Java CLI built here), on Debian's OpenJDK 17
bash "$HERE/verapdf.sh"   # veraPDF 1.28 from Maven Central jars: verapdf, the PDF/A and PDF/UA validator, on Debian's OpenJDK 17
bash "$HERE/browser.sh"   # Debian's Chromium, for playwright-core
bash "$HERE/kubernetes.sh" # Kubernetes (control plane, kubelet, kube-proxy), etcd, CoreDNS, kubectl, helm, k6 from Go modules; KEDA's and the Prometheus Operator's CRDs; containerd, runc, CNI plugins from Debian; the pause and CoreDNS images
