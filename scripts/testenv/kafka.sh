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
# regenerates it with Maven after KAFKA_VERSION or the binding changes.
# Idempotent: a run with everything present checks a stamp and runs `--version`
# (about 0.3 s).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
source "$HERE/../install/lib.sh"

KAFKA_VERSION=3.9.2
# Kafka 3.9 logs through slf4j 1.7 and ships the reload4j binding; the jars on
# Maven Central leave the binding to the application.
SLF4J_VERSION=1.7.36
RELOAD4J_VERSION=1.2.25
JRE_PACKAGE=openjdk-17-jre-headless
JAVA_SERIES=17
LOCK="$HERE/kafka-jars.txt"
MAVEN_CENTRAL=https://repo1.maven.org/maven2
# Jars by Maven path, shared by every Kafka version installed here.
JARS="$CACHE/maven"
HOME_DIR="$CACHE/kafka-$KAFKA_VERSION"

# org.apache.kafka:kafka_2.13:3.9.2 -> org/apache/kafka/kafka_2.13/3.9.2/kafka_2.13-3.9.2.jar
maven_path() {
  local group artifact version
  IFS=: read -r group artifact version <<<"$1"
  echo "${group//.//}/$artifact/$version/$artifact-$version.jar"
}

# Downloads a jar into $JARS unless it is there with the expected sha256;
# prints its path. A download goes to a temp name first.
fetch_jar() { # SHA256 GROUP:ARTIFACT:VERSION
  local path="$JARS/$(maven_path "$2")"
  if [[ ! -f "$path" || "$(sha256sum "$path" | cut -d' ' -f1)" != "$1" ]]; then
    mkdir -p "$(dirname "$path")"
    curl -fsSL --retry 3 -o "$path.tmp.$$" "$MAVEN_CENTRAL/$(maven_path "$2")" || { rm -f "$path.tmp.$$"; die "downloading $2 failed"; }
    [[ "$(sha256sum "$path.tmp.$$" | cut -d' ' -f1)" == "$1" ]] || { rm -f "$path.tmp.$$"; die "$2: sha256 differs from $LOCK"; }
    mv -f "$path.tmp.$$" "$path"
  fi
  echo "$path"
}

# The JRE's own java, not whatever `java` is first on PATH (a second JDK may be).
setup_java() {
  apt_install "$JRE_PACKAGE"
  # awk reads the whole list (grep -m1 would end dpkg-query early: SIGPIPE, and pipefail).
  JAVA="$(dpkg-query -L "$JRE_PACKAGE" | awk '/\/bin\/java$/ && !found { print; found = 1 }')"
  [[ -x "$JAVA" ]] || die "no bin/java in Debian package $JRE_PACKAGE"
  local version
  version="$(dpkg-query -W -f='${Version}' "$JRE_PACKAGE")"
  [[ "$version" == "$JAVA_SERIES".* ]] || die "$JRE_PACKAGE is $version, Kafka's tests expect Java $JAVA_SERIES"
  report java "$version" "$JAVA"
}

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
  local tmp="$HOME_DIR.tmp.$$" sha coords jar
  log "installing Kafka $KAFKA_VERSION from Maven Central (first time only)"
  rm -rf "$tmp"
  mkdir -p "$tmp/libs" "$tmp/config" "$tmp/bin"
  while read -r sha coords; do
    [[ -z "$sha" || "$sha" == \#* ]] && continue
    jar="$(fetch_jar "$sha" "$coords")"
    ln -f "$jar" "$tmp/libs/" 2>/dev/null || cp "$jar" "$tmp/libs/"
  done <"$LOCK"
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
  sha256sum "$LOCK" "$SELF" | cut -d' ' -f1 >"$tmp/.installed"
  rm -rf "$HOME_DIR"
  mv -T "$tmp" "$HOME_DIR"
}

setup_kafka() {
  grep -q " org.apache.kafka:kafka_2.13:$KAFKA_VERSION\$" "$LOCK" || die "$LOCK does not pin kafka_2.13 $KAFKA_VERSION: run bash $SELF lock"
  # The stamp covers the lock and this script (the launchers and config it writes).
  [[ "$(cat "$HOME_DIR/.installed" 2>/dev/null)" == "$(sha256sum "$LOCK" "$SELF" | cut -d' ' -f1)" ]] || install_kafka
  # "3.9.2" on a line of its own, after a log line; also catches a JRE or a jar that no longer loads.
  local version
  version="$("$HOME_DIR/bin/kafka-server" --version 2>/dev/null | sed -n '/^[0-9][0-9.]*$/p')"
  [[ "$version" == "$KAFKA_VERSION" ]] || die "$HOME_DIR/bin/kafka-server --version printed '${version}', expected $KAFKA_VERSION"
  link_bin kafka-server "../kafka-$KAFKA_VERSION/bin/kafka-server"
  link_bin kafka-storage "../kafka-$KAFKA_VERSION/bin/kafka-storage"
  report kafka "$version" "$HOME_DIR"
}

# Rewrites $LOCK: Maven (Debian's `maven`, pinned dependency plugin, its own
# repository in the cache) resolves the runtime dependencies; each jar is then
# fetched from Maven Central, checked against Central's .sha1 and hashed.
lock() {
  command -v mvn >/dev/null || die "mvn not found (Debian package maven)"
  local line group artifact type version scope path out
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>docservice</groupId><artifactId>kafka-testenv</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>$SLF4J_VERSION</version></dependency>
    <dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId><version>$RELOAD4J_VERSION</version></dependency>
  </dependencies>
</project>
EOF
  log "resolving Kafka $KAFKA_VERSION's runtime dependencies with Maven"
  (cd "$work" && mvn -B -q -Dmaven.repo.local="$CACHE/maven-resolver" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:list \
    -DincludeScope=runtime -Dsort=true -DoutputFile="$work/list.txt") >&2 ||
    die "mvn dependency:list failed"
  out="$work/kafka-jars.txt"
  {
    echo "# Kafka $KAFKA_VERSION (KRaft broker) and its runtime dependencies from Maven Central,"
    echo "# with slf4j-reload4j $SLF4J_VERSION and reload4j $RELOAD4J_VERSION for logging: sha256 and coordinates."
    echo "# Generated by \`bash scripts/testenv/kafka.sh lock\`; read by scripts/testenv/kafka.sh."
  } >"$out"
  # "   group:artifact:jar:version:scope"
  while read -r line; do
    IFS=: read -r group artifact type version scope <<<"$line"
    [[ -n "$scope" && "$type" == jar ]] || continue
    path="$(maven_path "$group:$artifact:$version")"
    mkdir -p "$(dirname "$JARS/$path")"
    curl -fsSL --retry 3 -o "$JARS/$path" "$MAVEN_CENTRAL/$path" || die "downloading $path failed"
    [[ "$(curl -fsSL --retry 3 "$MAVEN_CENTRAL/$path.sha1" | cut -c1-40)" == "$(sha1sum "$JARS/$path" | cut -d' ' -f1)" ]] ||
      die "$path does not match Maven Central's .sha1"
    echo "$(sha256sum "$JARS/$path" | cut -d' ' -f1) $group:$artifact:$version" >>"$out"
  done <"$work/list.txt"
  grep -q " org.apache.kafka:kafka_2.13:$KAFKA_VERSION\$" "$out" || die "Maven's list lacks kafka_2.13 $KAFKA_VERSION"
  mv -f "$out" "$LOCK"
  log "wrote $LOCK ($(grep -vc '^#' "$LOCK") jars)"
}

case "${1:-}" in
  lock) lock ;;
  "") setup_java; setup_kafka ;;
  *) die "usage: $SELF [lock]" ;;
esac
