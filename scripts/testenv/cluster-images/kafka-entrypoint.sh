#!/bin/sh
# Entry point of docservice-testenv/kafka (scripts/testenv/cluster-images.sh):
# a single-node Kafka in KRaft mode, broker and controller in one JVM, as
# test/support/kafka.ts runs it on the host. Writes server.properties into the
# data volume on every start, formats the KRaft storage on the first one, then
# becomes the broker (exec: the JVM is PID 1 and shuts down cleanly on SIGTERM).
#
# Environment (all optional):
#   KAFKA_ADVERTISED_HOST   host clients are told to connect to (default: hostname -f);
#                           in Kubernetes, the Service's name (kafka)
#   KAFKA_PORT              PLAINTEXT listener, default 9092
#   KAFKA_LISTEN_HOST       interface of the PLAINTEXT listener, default all
#   KAFKA_CONTROLLER_PORT   CONTROLLER listener (loopback only), default 9093
#   KAFKA_CLUSTER_ID        KRaft cluster id used by the first format (a base64url UUID)
#   KAFKA_DATA_DIR          the volume, default /var/lib/kafka
#   KAFKA_HEAP_OPTS         default -Xmx256m -Xms256m
#   KAFKA_JVM_OPTS          more JVM options
#   KAFKA_EXTRA_PROPERTIES  server.properties lines appended last (they win)
set -eu

data="${KAFKA_DATA_DIR:-/var/lib/kafka}"
port="${KAFKA_PORT:-9092}"
listen_host="${KAFKA_LISTEN_HOST:-}"
controller_port="${KAFKA_CONTROLLER_PORT:-9093}"
# "docservice-kafka" in base64url: fixed, so a volume formatted once fits every start.
cluster_id="${KAFKA_CLUSTER_ID:-ZG9jc2VydmljZS1rYWZrYQ}"
host="${KAFKA_ADVERTISED_HOST:-}"
if [ -z "$host" ]; then
  host="$(hostname -f 2>/dev/null || true)"
  [ -n "$host" ] || host="$(hostname)"
fi

logs="$data/data"
tmp="$data/tmp"
properties="$data/server.properties"
mkdir -p "$logs" "$tmp"
# Native libraries (zstd, snappy, lz4) unpack into java.io.tmpdir: the volume,
# since the root filesystem may be read-only. Nothing in it outlives a start.
find "$tmp" -mindepth 1 -delete

cat >"$properties.tmp" <<PROPERTIES
# Written by /opt/kafka/bin/kafka-entrypoint at every start: edits are lost.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://$listen_host:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://$host:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$logs
# Topics are created on purpose (the DocService operator creates its own).
auto.create.topics.enable=false
num.partitions=1
# One node: every replication factor and ISR minimum is 1.
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
# Fewer internal partitions than the default 50: a first consumer group or
# transactional producer waits for 1 partition to load, not 50.
offsets.topic.num.partitions=1
transaction.state.log.num.partitions=1
# A group's first join is not held back 3 s for more members.
group.initial.rebalance.delay.ms=0
# The log cleaner allocates this on the heap (default 128 MB of a 256 MB heap).
log.cleaner.dedupe.buffer.size=16777216
# A small node.
num.network.threads=2
num.io.threads=2
background.threads=2
PROPERTIES
if [ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]; then
  printf '# KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$properties.tmp"
fi
mv -f "$properties.tmp" "$properties"

# Options as kafka-run-class.sh sets them; no hsperfdata file in /tmp (read-only).
# The variables are word lists: no option may contain a space.
jvm="${KAFKA_HEAP_OPTS:--Xmx256m -Xms256m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20
  -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError
  -XX:-UsePerfData -Djava.awt.headless=true -Djava.io.tmpdir=$tmp ${KAFKA_JVM_OPTS:-}
  -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties -cp /opt/kafka/libs/*"
# The classpath wildcard is Java's, not the shell's.
set -f

if [ ! -f "$logs/meta.properties" ]; then
  # "=" form: a base64url id may start with "-", which would read as an option.
  # shellcheck disable=SC2086
  "$JAVA_HOME/bin/java" $jvm kafka.tools.StorageTool format --ignore-formatted --cluster-id="$cluster_id" -c "$properties"
fi
echo "kafka-entrypoint: Kafka $KAFKA_VERSION, advertised as $host:$port, data in $logs"
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" $jvm kafka.Kafka "$properties"
