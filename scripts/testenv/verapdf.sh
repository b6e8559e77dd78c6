#!/usr/bin/env bash
# veraPDF, the PDF/A and PDF/UA validator, for the conversion tests: its
# Greenfield CLI (org.verapdf.apps.GreenfieldCliWrapper, the class the
# release's `verapdf` script runs) from Maven Central jars, run by Debian's
# OpenJDK 17. Called by setup.sh.
#
#   $BIN/verapdf --flavour 2b|3b|ua1|... --format json|xml|text --nonpdfext FILE...
#
# validates every FILE in one JVM and prints one report for all of them
# (test/support/verapdf.ts runs it). JVM options come from VERAPDF_JVM_OPTS
# (default -Xmx1g).
#
# verapdf-jars.txt pins every jar (greenfield-apps and its runtime dependencies
# as Maven resolves them) with its sha256; `bash verapdf.sh lock` regenerates it
# with Maven (maven.sh) after VERAPDF_VERSION changes.
# Idempotent: the install lives in a directory named after VERAPDF_VERSION and
# a hash of the lock and the scripts (a new install removes the earlier ones); a
# run that finds it runs `verapdf --version` (about 0.5 s).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
source "$HERE/../install/lib.sh"
source "$HERE/maven.sh"

# The newest release on Maven Central; its POM takes the validation library
# from the range [1.28.0,1.29.0), which the lock pins to what Maven picked.
VERAPDF_VERSION=1.28.2
LOCK="$HERE/verapdf-jars.txt"

install_key() {
  cat "$LOCK" "$SELF" "$MAVEN_LIB" | sha256sum | cut -c1-16
}

# Builds DIR (libs/, bin/verapdf) in a temp dir and moves it into place.
install_verapdf() { # DIR
  local tmp="$1.tmp.$$"
  log "installing veraPDF $VERAPDF_VERSION from Maven Central jars (first time only)"
  rm -rf "$tmp"
  mkdir -p "$tmp/libs" "$tmp/bin"
  install_jars "$LOCK" "$tmp/libs"
  # app.home is where veraPDF keeps config/ (it writes its defaults there on the
  # first run, the --version check below, and only reads them afterwards) and
  # looks for plugins/ (none). A short-lived JVM: C1 only and the serial
  # collector start fastest.
  cat >"$tmp/bin/verapdf" <<EOF
#!/bin/sh
# Written by scripts/testenv/verapdf.sh: veraPDF $VERAPDF_VERSION (greenfield-apps).
exec "$JAVA" \${VERAPDF_JVM_OPTS:--Xmx1g} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \\
  -Dfile.encoding=UTF-8 -Dapp.home="$1/home" \\
  -cp "$1/libs/*" org.verapdf.apps.GreenfieldCliWrapper "\$@"
EOF
  chmod +x "$tmp/bin/verapdf"
  mkdir -p "$tmp/home"
  rm -rf "$1"
  mv -T "$tmp" "$1"
}

setup_verapdf() {
  grep -q " org.verapdf.apps:greenfield-apps:$VERAPDF_VERSION\$" "$LOCK" || die "$LOCK does not pin greenfield-apps $VERAPDF_VERSION: run bash $SELF lock"
  local name dir old version built=""
  name="verapdf-$VERAPDF_VERSION-$(install_key)"
  dir="$CACHE/$name"
  # "veraPDF 1.28.2" on the first line; also catches a JRE or a jar that no longer loads.
  version="$("$dir/bin/verapdf" --version 2>/dev/null | awk 'NR==1{print $2}')" || true
  if [[ "$version" != "$VERAPDF_VERSION" ]]; then
    install_verapdf "$dir"
    version="$("$dir/bin/verapdf" --version 2>&1 | awk 'NR==1{print $2}')"
    [[ "$version" == "$VERAPDF_VERSION" ]] || die "$dir/bin/verapdf --version does not print veraPDF $VERAPDF_VERSION"
    built=1
  fi
  link_bin verapdf "../$name/bin/verapdf"
  # After an install, the earlier ones (another lock or version) are no longer linked.
  if [[ -n "$built" ]]; then
    for old in "$CACHE"/verapdf-[0-9]*-[0-9a-f]*; do
      [[ "$old" == "$dir" || "$old" == *.tmp.* ]] || rm -rf "$old"
    done
  fi
  report verapdf "$version" "$dir/bin/verapdf"
}

lock() {
  maven_lock "$LOCK" verapdf.sh "veraPDF $VERAPDF_VERSION (org.verapdf.apps:greenfield-apps, the CLI and its Greenfield validation model)
and its runtime dependencies from Maven Central: sha256 and coordinates." \
    "org.verapdf.apps:greenfield-apps:$VERAPDF_VERSION"
}

case "${1:-}" in
  lock) lock ;;
  "") setup_java; setup_verapdf ;;
  *) die "usage: $SELF [lock]" ;;
esac
