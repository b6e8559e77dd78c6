#!/usr/bin/env bash
# Kafka 3.9 for the telemetry tests, in KRaft mode (no ZooKeeper): the broker's
# jars from Maven Central, run by Debian's OpenJDK 17 JRE. Called by setup.sh.
#
#   $BIN/kafka-server FILE                  kafka.Kafka with server.properties FILE
#   $BIN/kafka-storage format -t ID -c FILE  kafka.tools.StorageTool (format KRaft storage first)
#
# Both take JVM options from KAFKA_HEAP_OPTS (default -Xmx256m: the machine is
# shared with other tests) and KAFKA_JVM_OPTS. test/support/kafka.ts runs them.
#
# kafka-jars.txt pins every jar (kafka_2.13, its runtime dependencies as Maven
# resolves them, and a reload4j log binding) with its sha256; `bash kafka.sh lock`
# regenerates it with Maven after KAFKA_VERSION or the binding changes (maven.sh,
# shared with dss.sh, fetches the jars and writes the lock).
# Idempotent: a run with everything present checks a stamp and runs `--version`
# (about 0.3 s).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
source "$HERE/../install/lib.sh"
source "$HERE/maven.sh"

KAFKA_VERSION=3.9.2
# Kafka 3.9 logs through slf4j 1.7 and ships the reload4j binding; the jars on
# Maven Central leave the binding to the application.
SLF4J_VERSION=1.7.36
RELOAD4J_VERSION=1.2.25
LOCK="$HERE/kafka-jars.txt"
HOME_DIR="$CACHE/kafka-$KAFKA_VERSION"

write_launcher() { # DIR NAME MAIN_CLASS
  cat >"$1/bin/$2" <<EOF
#!/bin/sh
# Written by scripts/testenv/kafka.sh: Kafka $KAFKA_VERSION, $3.
exec "$JAVA" \${KAFKA_HEAP_OPTS:--Xmx256m} \\
  -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -Djava.awt.headless=true \\
  \$KAFKA_JVM_OPTS -Dlog4j.configuration="file:$HOME_DIR/config/log4j.properties" \\
  -cp "$HOME_DIR/libs/*" $3 "\$@"
EOF
  chmod +x "$1/bin/$2"
}

# Builds $HOME_DIR (libs/, config/, bin/) in a temp dir and moves it into place.
install_kafka() {
  local tmp="$HOME_DIR.tmp.$$"
  log "installing Kafka $KAFKA_VERSION from Maven Central (first time only)"
  rm -rf "$tmp"
  mkdir -p "$tmp/libs" "$tmp/config" "$tmp/bin"
  install_jars "$LOCK" "$tmp/libs"
  cat >"$tmp/config/log4j.properties" <<'EOF'
# Console only: test/support/kafka.ts sends the output to a log file per broker.
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
EOF
  write_launcher "$tmp" kafka-server kafka.Kafka
  write_launcher "$tmp" kafka-storage kafka.tools.StorageTool
  sha256sum "$LOCK" "$SELF" "$MAVEN_LIB" | cut -d' ' -f1 >"$tmp/.installed"
  rm -rf "$HOME_DIR"
  mv -T "$tmp" "$HOME_DIR"
}

setup_kafka() {
  grep -q " org.apache.kafka:kafka_2.13:$KAFKA_VERSION\$" "$LOCK" || die "$LOCK does not pin kafka_2.13 $KAFKA_VERSION: run bash $SELF lock"
  # The stamp covers the lock, this script (the launchers and config it writes) and maven.sh.
  [[ "$(cat "$HOME_DIR/.installed" 2>/dev/null)" == "$(sha256sum "$LOCK" "$SELF" "$MAVEN_LIB" | cut -d' ' -f1)" ]] || install_kafka
  # "3.9.2" on a line of its own, after a log line; also catches a JRE or a jar that no longer loads.
  local version
  version="$("$HOME_DIR/bin/kafka-server" --version 2>/dev/null | sed -n '/^[0-9][0-9.]*$/p')"
  [[ "$version" == "$KAFKA_VERSION" ]] || die "$HOME_DIR/bin/kafka-server --version printed '${version}', expected $KAFKA_VERSION"
  link_bin kafka-server "../kafka-$KAFKA_VERSION/bin/kafka-server"
  link_bin kafka-storage "../kafka-$KAFKA_VERSION/bin/kafka-storage"
  report kafka "$version" "$HOME_DIR"
}

lock() {
  maven_lock "$LOCK" kafka.sh "Kafka $KAFKA_VERSION (KRaft broker) and its runtime dependencies from Maven Central,
with slf4j-reload4j $SLF4J_VERSION and reload4j $RELOAD4J_VERSION for logging: sha256 and coordinates." \
    "org.apache.kafka:kafka_2.13:$KAFKA_VERSION" "org.slf4j:slf4j-reload4j:$SLF4J_VERSION" "ch.qos.reload4j:reload4j:$RELOAD4J_VERSION"
}

case "${1:-}" in
  lock) lock ;;
  "") setup_java; report java "$JAVA_VERSION" "$JAVA"; setup_kafka ;;
  *) die "usage: $SELF [lock]" ;;
esac
