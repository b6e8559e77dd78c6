#!/usr/bin/env bash
# The EU Commission's DSS (Digital Signature Service) for the signing tests: an
# independent PAdES validator, as a small Java CLI (dss/ValidatePdf.java)
# compiled against DSS's jars from Maven Central and run by Debian's OpenJDK 17.
# Called by setup.sh.
#
#   $BIN/dss-validate --pdf FILE --trust ROOT.pem [--trust MORE.pem ...] [--allow-online] [--validation-time ISO]
#
# prints DSS's verdict as JSON (test/support/dss-validator.ts runs it). JVM
# options come from DSS_JVM_OPTS (default -Xmx512m).
#
# dss-jars.txt pins every jar (the DSS modules below, their runtime
# dependencies as Maven resolves them, and an slf4j binding) with its sha256;
# `bash dss.sh lock` regenerates it with Maven (maven.sh) after DSS_VERSION or
# the modules change.
# Idempotent: the build lives in a directory named after DSS_VERSION and a hash
# of the lock, the CLI's source and the scripts (a new build removes the
# earlier ones); a run that finds it runs `dss-validate --version` (about 0.1 s).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
source "$HERE/../install/lib.sh"
source "$HERE/maven.sh"

DSS_VERSION=6.4
# DSS logs through slf4j 2 (the version its parent POM manages) and leaves the binding to the application.
SLF4J_VERSION=2.0.17
# PAdES validation with PDFBox and DSS's default validation policy, online
# OCSP/CRL/AIA sources (dss-service), and one implementation of each of DSS's
# pluggable APIs: CMS (dss-cms-object), utilities, CRL parsing.
MODULES=(dss-pades-pdfbox dss-validation dss-policy-jaxb dss-service dss-cms-object dss-utils-apache-commons dss-crl-parser-x509crl)
LOCK="$HERE/dss-jars.txt"
SOURCE="$HERE/dss/ValidatePdf.java"

build_key() {
  cat "$LOCK" "$SOURCE" "$SELF" "$MAVEN_LIB" | sha256sum | cut -c1-16
}

# Builds DIR (libs/, classes/, bin/dss-validate) in a temp dir and moves it into place.
install_dss() { # DIR
  local tmp="$1.tmp.$$"
  log "building dss-validate on DSS $DSS_VERSION from Maven Central jars (first time only)"
  rm -rf "$tmp"
  mkdir -p "$tmp/libs" "$tmp/classes" "$tmp/bin"
  install_jars "$LOCK" "$tmp/libs"
  "$JAVAC" --release "$JAVA_SERIES" -nowarn -encoding UTF-8 -cp "$tmp/libs/*" -d "$tmp/classes" "$SOURCE" >&2 ||
    { rm -rf "$tmp"; die "compiling $SOURCE failed"; }
  # A short-lived JVM: the C1 compiler only and the serial collector start fastest.
  cat >"$tmp/bin/dss-validate" <<EOF
#!/bin/sh
# Written by scripts/testenv/dss.sh: DSS $DSS_VERSION, scripts/testenv/dss/ValidatePdf.java.
exec "$JAVA" \${DSS_JVM_OPTS:--Xmx512m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \\
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
  -cp "$1/classes:$1/libs/*" ValidatePdf "\$@"
EOF
  chmod +x "$tmp/bin/dss-validate"
  rm -rf "$1"
  mv -T "$tmp" "$1"
}

setup_dss() {
  grep -q " eu.europa.ec.joinup.sd-dss:dss-pades-pdfbox:$DSS_VERSION\$" "$LOCK" || die "$LOCK does not pin dss-pades-pdfbox $DSS_VERSION: run bash $SELF lock"
  local name dir old built="" expected="dss-validate (DSS $DSS_VERSION)"
  name="dss-$DSS_VERSION-$(build_key)"
  dir="$CACHE/$name"
  # A missing or broken build (a JRE or a jar that no longer loads) is built again.
  if [[ "$("$dir/bin/dss-validate" --version 2>/dev/null)" != "$expected" ]]; then
    install_dss "$dir"
    [[ "$("$dir/bin/dss-validate" --version 2>&1)" == "$expected" ]] || die "$dir/bin/dss-validate --version does not print '$expected'"
    built=1
  fi
  link_bin dss-validate "../$name/bin/dss-validate"
  # After a build, the earlier ones (another source, lock or DSS version) are no longer linked.
  if [[ -n "$built" ]]; then
    for old in "$CACHE"/dss-[0-9]*-[0-9a-f]*; do
      [[ "$old" == "$dir" || "$old" == *.tmp.* ]] || rm -rf "$old"
    done
  fi
  report dss-validate "$DSS_VERSION" "$dir/bin/dss-validate"
}

lock() {
  local module coordinates=()
  for module in "${MODULES[@]}"; do coordinates+=("eu.europa.ec.joinup.sd-dss:$module:$DSS_VERSION"); done
  maven_lock "$LOCK" dss.sh "DSS $DSS_VERSION (the modules dss.sh lists in MODULES) and their runtime dependencies from Maven Central,
with slf4j-simple $SLF4J_VERSION for logging: sha256 and coordinates." \
    "${coordinates[@]}" "org.slf4j:slf4j-simple:$SLF4J_VERSION"
}

case "${1:-}" in
  lock) lock ;;
  "") setup_java jdk; setup_dss ;;
  *) die "usage: $SELF [lock]" ;;
esac
