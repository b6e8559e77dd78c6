// The Redis and Kafka images of the test cluster (scripts/testenv/cluster-images.sh,
// run by test/e2e/manifests/*.yaml), run under runc as a restricted pod would run
// them (their own non-root user, no capabilities, read-only root, the data
// directory a writable mount), on the host's network at free loopback ports.
import assert from "node:assert/strict";
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs, { Kafka, logLevel } from "kafkajs";
import { createClient } from "redis";
import { readMessages } from "../support/kafka.js";
import { freePort } from "../support/ports.js";
import { redisPing } from "../support/redis.js";
import { canRunRunc, run, unpack, type Bundle, type Container } from "../support/runc.js";
import { runCommand } from "../support/run-command.js";
import { waitFor } from "../support/wait.js";

// CommonJS: not a named export under ESM.
const { ConfigResourceTypes } = kafkajs;
const ROOT = new URL("../../", import.meta.url).pathname;
const SCRIPT = join(ROOT, "scripts/testenv/cluster-images.sh");
const UID = 65532;

interface Archives {
  tag: string;
  oci: string;
  docker: string;
}

/** Runs the script; its stdout has "name tag path" per archive. */
async function buildImages(): Promise<{ images: Map<string, Archives>; seconds: number }> {
  const started = Date.now();
  const result = await runCommand("bash", [SCRIPT], { cwd: ROOT, timeoutMs: 20 * 60_000 });
  if (result.code !== 0) throw new Error(`cluster-images.sh failed:\n${result.output.slice(-4000)}`);
  const images = new Map<string, Archives>();
  for (const line of result.output.split("\n")) {
    const [name, tag, path] = line.trim().split(/\s+/);
    if (!path || !/\.(oci|docker)\.tar$/.test(path)) continue;
    const entry = images.get(name) ?? { tag, oci: "", docker: "" };
    assert.equal(entry.tag, tag);
    if (path.endsWith(".oci.tar")) entry.oci = path;
    else entry.docker = path;
    images.set(name, entry);
  }
  return { images, seconds: (Date.now() - started) / 1000 };
}

/** A data directory owned by the images' user, as fsGroup makes a pod's volume. */
function dataDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `docservice-${name}-data-`));
  chownSync(dir, UID, UID);
  return dir;
}

/** The real uid of a host process (the container's PID 1). */
function uidOf(pid: number): number {
  return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
}

// Only a machine where the script cannot run skips: it installs runc and umoci
// itself, so a fresh machine without them still runs (and so checks) it all.
const skip =
  process.platform !== "linux" ? `needs Linux (this is ${process.platform})` :
  process.getuid?.() !== 0 ? "needs root (mmdebstrap --mode=root, runc)" : false;
if (skip) console.error(`\n!! SKIPPED: the test cluster images under runc: ${skip}\n`);

describe("test cluster images under runc: Redis and Kafka", { skip, timeout: 30 * 60_000 }, () => {
  let images: Map<string, Archives>;
  const bundles: Bundle[] = [];
  const containers: Container[] = [];
  const dirs: string[] = [];

  before(async () => {
    ({ images } = await buildImages());
    const can = canRunRunc();
    if (!can.ok) throw new Error(`after cluster-images.sh: ${can.reason}`);
  });
  after(async () => {
    for (const container of containers) await container.stop();
    for (const bundle of bundles) bundle.remove();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test("the script prints an OCI and a docker archive per image, and a second run reuses them", async (t) => {
    assert.deepEqual([...images.keys()].sort(), ["kafka", "redis"]);
    assert.match(images.get("redis")!.tag, /^docservice-testenv\/redis:7\.0\.\d+-[\w.-]+$/);
    assert.match(images.get("kafka")!.tag, /^docservice-testenv\/kafka:3\.9\.\d+$/);
    const again = await buildImages();
    t.diagnostic(`cached run: ${again.seconds.toFixed(1)} s`);
    assert.deepEqual(again.images, images);
    assert.ok(again.seconds < 15, `a run with nothing to build took ${again.seconds} s`);
  });

  test("redis: runs as 65532, answers PING and SET/GET, appends to /data, keeps the data over a restart", async () => {
    const bundle = await unpack(images.get("redis")!.oci);
    bundles.push(bundle);
    assert.equal(bundle.image.User, `${UID}:${UID}`);
    assert.equal(bundle.image.WorkingDir, "/data");
    const data = dataDir("redis");
    dirs.push(data);
    const port = await freePort();
    const start = async () => {
      const container = await run(bundle, { args: ["--port", String(port), "--bind", "127.0.0.1"], mounts: [{ destination: "/data", source: data }] });
      containers.push(container);
      await waitFor(() => redisPing(port), { what: `redis in ${container.id} on port ${port}`, timeoutMs: 30_000 }).catch((err) => {
        throw new Error(`${(err as Error).message}\n${container.output().slice(-3000)}`);
      });
      return container;
    };

    let container = await start();
    assert.equal(uidOf(await container.pid()), UID);
    let client = createClient({ url: `redis://127.0.0.1:${port}` });
    await client.connect();
    try {
      assert.equal(await client.ping(), "PONG");
      assert.equal(await client.set("docservice:test", "billing-count-42"), "OK");
      assert.equal(await client.get("docservice:test"), "billing-count-42");
      const config = await client.configGet("*");
      assert.equal(config.appendonly, "yes");
      assert.equal(config.dir, "/data");
      assert.equal(config["lazyfree-lazy-expire"], "yes");
      assert.equal(config["maxmemory-policy"], "noeviction");
    } finally {
      await client.quit();
    }
    assert.ok(readdirSync(data).includes("appendonlydir"), `no append-only file in /data: ${readdirSync(data).join(", ")}`);

    await container.stop();
    assert.equal(await container.exited, 0, container.output().slice(-2000));
    container = await start();
    client = createClient({ url: `redis://127.0.0.1:${port}` });
    await client.connect();
    try {
      assert.equal(await client.get("docservice:test"), "billing-count-42");
    } finally {
      await client.quit();
    }
  });

  test("kafka: runs as 65532, KRaft single node; a topic created, a message produced and consumed", async (t) => {
    const bundle = await unpack(images.get("kafka")!.oci);
    bundles.push(bundle);
    assert.equal(bundle.image.User, `${UID}:${UID}`);
    const data = dataDir("kafka");
    dirs.push(data);
    const port = await freePort();
    const controllerPort = await freePort();
    const started = Date.now();
    const container = await run(bundle, {
      env: {
        KAFKA_PORT: String(port),
        KAFKA_CONTROLLER_PORT: String(controllerPort),
        KAFKA_LISTEN_HOST: "127.0.0.1",
        KAFKA_ADVERTISED_HOST: "127.0.0.1",
      },
      mounts: [{ destination: "/var/lib/kafka", source: data }, { destination: "/tmp" }],
    });
    containers.push(container);
    assert.equal(uidOf(await container.pid()), UID);

    const client = new Kafka({ clientId: "cluster-images-test", brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING });
    const admin = client.admin();
    try {
      await waitFor(
        async () => {
          await admin.connect();
          await admin.listTopics();
          return true;
        },
        { what: `kafka in ${container.id} on port ${port}`, timeoutMs: 120_000, intervalMs: 500 },
      ).catch((err) => {
        throw new Error(`${(err as Error).message}\n${container.output().slice(-4000)}`);
      });
      t.diagnostic(`kafka answered after ${Date.now() - started} ms`);

      const broker = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: "1", configNames: ["auto.create.topics.enable", "offsets.topic.replication.factor"] }],
      });
      const settings = Object.fromEntries(broker.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
      assert.deepEqual(settings, { "auto.create.topics.enable": "false", "offsets.topic.replication.factor": "1" });

      const topic = `cluster-images-${Date.now()}`;
      assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true }), true);
      const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        await producer.send({ topic, acks: -1, messages: [{ key: "license-1", value: "usage-event-1" }] });
      } finally {
        await producer.disconnect();
      }
      assert.deepEqual(await readMessages(client, topic, `group-${topic}`, 1), ["usage-event-1"]);
    } finally {
      await admin.disconnect();
    }
    assert.match(readFileSync(join(data, "data", "meta.properties"), "utf8"), /cluster\.id=ZG9jc2VydmljZS1rYWZrYQ/);

    // A JVM ends with 143 (128 + SIGTERM) after its shutdown hooks ran: Kafka's closed the logs.
    await container.stop();
    assert.equal(await container.exited, 143, container.output().slice(-2000));
    assert.match(container.output(), /\[BrokerServer id=1\] shut down completed/);
  });
});
