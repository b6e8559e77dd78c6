import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Kafka, logLevel, type ConsumerRunConfig } from "kafkajs";
import { cacheBin } from "./cache.js";
import { startDaemon, type Daemon } from "./daemon.js";
import { freePort } from "./ports.js";
import { canConnect } from "./wait.js";

const run = promisify(execFile);

export interface KafkaBroker {
  /** ["127.0.0.1:PORT"], for kafkajs' `brokers`. */
  brokers: string[];
  port: number;
  /** SIGTERM (or SIGKILL), then waits for the broker to exit. The data is kept for start(). */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** SIGSTOP: the broker holds every connection without answering, until resume(). */
  pause(): void;
  resume(): void;
  /** Starts the broker again after stop(), on the same port, with the same data. */
  start(): Promise<void>;
}

// Data dirs outlive stop() (start() reuses them): removed when the test process exits.
const dataDirs = new Set<string>();
process.on("exit", () => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Starts a throwaway single-node Kafka 3.9 in KRaft mode (broker and controller in
 * one JVM, installed by scripts/testenv/kafka.sh) on free loopback ports, with its
 * data in a temp dir. Resolves once kafkajs can list topics and start an
 * idempotent producer (see brokerReady).
 * Topics are created on first use, with one partition unless created otherwise.
 */
export async function startKafka(): Promise<KafkaBroker> {
  const server = cacheBin("kafka-server");
  const storage = cacheBin("kafka-storage");
  const port = await freePort();
  const controllerPort = await freePort();
  const brokers = [`127.0.0.1:${port}`];

  const dir = mkdtempSync(join(tmpdir(), `docservice-kafka-${port}-data-`));
  dataDirs.add(dir);
  const properties = join(dir, "server.properties");
  writeFileSync(properties, serverProperties(port, controllerPort, join(dir, "logs")));
  // A KRaft log dir is formatted once, with a cluster id (a base64url UUID).
  const clusterId = randomBytes(16).toString("base64url");
  // "=" form: a base64url id may start with "-", which would read as an option
  await run(storage, ["format", `--cluster-id=${clusterId}`, "-c", properties]);

  let daemon: Daemon | undefined;
  const start = async () => {
    if (daemon) throw new Error(`kafka on port ${port} is already running`);
    daemon = await startDaemon({
      name: `kafka-${port}`,
      command: server,
      args: () => [properties],
      ready: async () => (await canConnect(port)) && (await brokerReady(brokers)),
      timeoutMs: 60_000,
    });
  };
  const stop = async (signal?: "SIGTERM" | "SIGKILL") => {
    const running = daemon;
    daemon = undefined;
    await running?.stop(signal);
  };

  try {
    await start();
  } catch (err) {
    dataDirs.delete(dir);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { brokers, port, start, stop, pause: () => daemon?.signal("SIGSTOP"), resume: () => daemon?.signal("SIGCONT") };
}

function serverProperties(port: number, controllerPort: number, logDir: string): string {
  const settings: Record<string, string | number | boolean> = {
    "process.roles": "broker,controller",
    "node.id": 1,
    "controller.quorum.voters": `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    "advertised.listeners": `PLAINTEXT://127.0.0.1:${port}`,
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "log.dirs": logDir,
    "auto.create.topics.enable": true,
    "num.partitions": 1,
    // One node: every replication factor and ISR minimum is 1.
    "default.replication.factor": 1,
    "min.insync.replicas": 1,
    "offsets.topic.replication.factor": 1,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    // Fewer internal partitions than the default 50: a first consumer group or
    // transactional producer then waits for 1 partition to load, not 50.
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.num.partitions": 1,
    // A group's first join is not held back 3 s for more members.
    "group.initial.rebalance.delay.ms": 0,
    // The log cleaner allocates this on the heap (default 128 MB of a 256 MB heap).
    "log.cleaner.dedupe.buffer.size": 16 * 1024 * 1024,
    // A 2-core machine shared with other tests.
    "num.network.threads": 2,
    "num.io.threads": 2,
    "background.threads": 2,
  };
  return Object.entries(settings).map(([key, value]) => `${key}=${value}\n`).join("");
}

/**
 * True once the broker lists topics and grants an idempotent producer its id
 * (refused with "coordinator is loading" until the broker's first block of
 * producer ids arrives from the controller, shortly after each start).
 */
async function brokerReady(brokers: string[]): Promise<boolean> {
  const client = new Kafka({
    clientId: "docservice-test-readiness",
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 2_000,
    retry: { retries: 0 },
  });
  const admin = client.admin();
  // kafkajs refuses an idempotent producer that may not retry; once is enough here.
  const producer = client.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 1, initialRetryTime: 50 } });
  try {
    await admin.connect();
    await admin.listTopics();
    await producer.connect();
    return true;
  } finally {
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  }
}

/**
 * Joins `groupId` on `topic`, from where the group left off (or the start),
 * and runs the handlers until they call `done`; rejects after `timeout.ms`
 * with `timeout.progress()`. Offsets processed so far are committed on
 * disconnect.
 */
export async function consume(
  client: Kafka,
  topic: string,
  groupId: string,
  handlers: (done: () => void) => Pick<ConsumerRunConfig, "eachMessage" | "eachBatch">,
  timeout: { ms: number; progress: () => string },
): Promise<void> {
  const consumer = client.consumer({ groupId });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(timeout.progress())), timeout.ms);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      consumer.run(handlers(done)).catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
}

/** Joins `groupId`, reads `count` messages from where the group left off (or the start), commits, leaves. */
export async function readMessages(client: Kafka, topic: string, groupId: string, count: number): Promise<string[]> {
  const values: string[] = [];
  await consume(
    client,
    topic,
    groupId,
    (done) => ({
      eachMessage: async ({ message }) => {
        values.push(message.value?.toString() ?? "");
        if (values.length >= count) done();
      },
    }),
    { ms: 20_000, progress: () => `read ${values.length} of ${count} messages in 20 s` },
  );
  return values;
}
