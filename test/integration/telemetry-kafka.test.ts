// Usage telemetry end to end on the platform in Kafka mode: /v1/collect →
// Kafka (idempotent producer, acks=all) → the aggregator consumer group →
// Redis → /v1/usage, against a real Kafka 3.9 (KRaft) and a real Redis,
// including Kafka outages (the local spool) and a service restart mid-outage.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startKafka, type KafkaBroker } from "../support/kafka.js";
import { freePort } from "../support/ports.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { waitFor } from "../support/wait.js";
import { answers, startService, type ServiceProcess } from "../support/service-process.js";
import { ADMIN_TOKEN, collect, kafkaModeEnv, registerLicenseKey, report, today, usage, usageWhen } from "../support/usage-reports.js";

describe("telemetry through Kafka", () => {
  let kafka: KafkaBroker;
  let redis: RedisServer;
  let dataDir: string;
  let base: string;
  let service: ServiceProcess;
  const range = () => ({ from: today(), to: today() });

  async function startPlatform(): Promise<void> {
    service = await startService(
      "all",
      kafkaModeEnv({ port: new URL(base).port, dataDir, kafkaBrokers: kafka.brokers, redisUrl: redis.url }, { TELEMETRY_DIRECT_TIMEOUT_MS: "500", TELEMETRY_SPOOL_HANDOVER_MS: "2000", LOG_LEVEL: "warn" }),
      () => answers(`${base}/v1/health`),
    );
  }

  before(async () => {
    [kafka, redis] = await Promise.all([startKafka(), startRedis()]);
    dataDir = mkdtempSync(join(tmpdir(), "docservice-telemetry-kafka-"));
    base = `http://127.0.0.1:${await freePort()}`;
    await startPlatform();
  });

  after(async () => {
    await service?.stop();
    await Promise.allSettled([kafka?.stop(), redis?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A license key of its own per test, so counts do not mix. */
  const licenseKey = (name: string) => registerLicenseKey(base, name);

  test("reports reach Kafka and the aggregator: exact distinct documents and opens", async () => {
    const key = await licenseKey("e2e");
    for (let i = 0; i < 5; i++) assert.equal((await collect(base, report(["HASH-0000000A"]), key)).status, 202);
    assert.equal((await collect(base, report(["HASH-0000000B", "HASH-0000000C"]), key)).status, 202);
    // the same id under other metadata is the same document
    assert.equal((await collect(base, report(["HASH-0000000A"], { metadata: { tenant: "other" } }), key)).status, 202);
    const counted = await usageWhen(base, key, range(), (u) => u.opens === 8);
    assert.equal(counted.documents, 3);
    assert.deepEqual(counted.byDay, [{ date: today(), documents: 3, documentsWithoutContentId: 0, opens: 8 }]);
    // counted per tenant by the aggregator in Redis: only the report that carried a tenant
    const grouped = (await usage(base, key, today(), today(), ADMIN_TOKEN, "metadata.tenant")).body.grouped;
    assert.deepEqual(grouped.groups.map((g: { value: string; documents: number; opens: number }) => [g.value, g.documents, g.opens]), [["other", 1, 1]]);

    // on /metrics: every accepted event applied, no lag left on any partition, nothing spooled
    const sample = (metrics: string, name: string) => [...metrics.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))].map((m) => Number(m[1]));
    let metrics = "";
    await waitFor(
      async () => {
        metrics = await (await fetch(`${base}/metrics`)).text();
        const lag = sample(metrics, "docservice_usage_consumer_lag");
        return lag.length > 0 && lag.every((records) => records === 0) && sample(metrics, "docservice_usage_events_applied_total")[0] === sample(metrics, "docservice_usage_events_accepted_total")[0];
      },
      { timeoutMs: 45_000, what: "the aggregator to report no lag and every accepted event applied" },
    );
    assert.ok(sample(metrics, "docservice_usage_events_accepted_total")[0]! >= 8);
    assert.match(metrics, /^docservice_usage_consumer_lag\{partition="0"\} 0$/m);
    assert.match(metrics, /^docservice_usage_spool_bytes 0/m);
  });

  test("the aggregator alone is ready (/health 200) once in its consumer group with its store answering; a store it cannot reach makes it unready, not dead", async () => {
    const dataDirs: string[] = [];
    const start = async (redisUrl: string) => {
      const port = await freePort();
      dataDirs.push(mkdtempSync(join(tmpdir(), "docservice-aggregator-")));
      const env = { ...kafkaModeEnv({ port: String(port), dataDir: dataDirs.at(-1)!, kafkaBrokers: kafka.brokers, redisUrl }), TELEMETRY_CONSUMER_GROUP: `health-${port}`, LOG_LEVEL: "warn" };
      return { port, process: await startService("aggregator", env, () => answers(`http://127.0.0.1:${port}/metrics`)) };
    };
    const healthy = await start(redis.url);
    const unreachable = await start(`redis://127.0.0.1:${await freePort()}`);
    try {
      const health = async (port: number) => {
        const response = await fetch(`http://127.0.0.1:${port}/health`);
        return { status: response.status, body: (await response.json()) as { status: string; error?: string } };
      };
      await waitFor(async () => (await health(healthy.port)).status === 200, { what: "the aggregator to join its group", timeoutMs: 90_000 });
      const down = await health(unreachable.port);
      assert.equal(down.status, 503);
      assert.equal(down.body.status, "down");
      assert.match(down.body.error ?? "", /unavailable|Redis/i);
      assert.equal((await fetch(`http://127.0.0.1:${unreachable.port}/metrics`)).status, 200, "alive all the same");
    } finally {
      await Promise.allSettled([healthy.process.stop(), unreachable.process.stop()]);
      for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  test("Kafka stopped during a load of reports, then restarted: every accepted event is counted exactly once", async () => {
    const key = await licenseKey("outage");
    let accepted = 0;
    let refused = 0;
    let sent = 0;
    const post = async () => {
      const n = sent++;
      const result = await collect(base, report([`HASH-${String(n % 200).padStart(8, "0")}`, `HASH-X${n}`]), key);
      if (result.status === 202) accepted += result.body.accepted;
      else refused++;
    };
    const load = async (ms: number) => {
      const until = Date.now() + ms;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (Date.now() < until) await post();
        }),
      );
    };
    await load(1000);
    const stopping = kafka.stop();
    await load(4000); // Kafka going down and down: the spool takes the events
    await stopping;
    const spooled = await (await fetch(`${base}/metrics`)).text();
    assert.match(spooled, /^docservice_usage_spool_bytes [1-9]\d*/m, "events went to the spool while Kafka was down");
    const restarting = kafka.start();
    await load(1000);
    await restarting;
    await load(1000);

    assert.equal(refused, 0);
    const distinct = Math.min(sent, 200) + sent;
    const counted = await usageWhen(base, key, range(), (u) => u.opens >= accepted, 120_000);
    await sleep(1000);
    const settled = (await usage(base, key, today(), today())).body;
    assert.equal(settled.opens, accepted, "each accepted event counted once");
    assert.equal(settled.documents, distinct);
    assert.equal(counted.opens, accepted);
  });

  test("direct writes that outlive their deadline (1 ms) and land all the same: the spooled copies are read back and dropped, every event counted once", async () => {
    const key = await licenseKey("deadline");
    const hastyDir = mkdtempSync(join(tmpdir(), "docservice-telemetry-hasty-"));
    const hastyBase = `http://127.0.0.1:${await freePort()}`;
    const env = kafkaModeEnv({ port: new URL(hastyBase).port, dataDir: hastyDir, kafkaBrokers: kafka.brokers, redisUrl: redis.url }, { TELEMETRY_DIRECT_TIMEOUT_MS: "1", LOG_LEVEL: "warn" });
    const hasty = await startService("all", env, () => answers(`${hastyBase}/v1/health`));
    try {
      let accepted = 0;
      await Promise.all(
        Array.from({ length: 4 }, async (_, worker) => {
          for (let i = 0; i < 25; i++) {
            const result = await collect(hastyBase, report([`HASH-D${worker}-${i}`, "HASH-DSHARED"]), key);
            assert.equal(result.status, 202);
            accepted += result.body.accepted;
          }
        }),
      );
      const metrics = await (await fetch(`${hastyBase}/metrics`)).text();
      assert.doesNotMatch(metrics, /^docservice_usage_spool_bytes 0$/m, "the reports were spooled after their 1 ms deadline");
      const counted = await usageWhen(base, key, range(), (u) => u.opens >= accepted, 60_000);
      await sleep(3000); // spooled copies still being delivered would show by now
      const settled = (await usage(base, key, today(), today())).body;
      assert.deepEqual([settled.opens, settled.documents], [accepted, 101]);
      assert.equal(counted.opens, accepted);
    } finally {
      await hasty.stop();
      rmSync(hastyDir, { recursive: true, force: true });
    }
  });

  test("a restart of the service with events still spooled delivers them once Kafka is back", async () => {
    const key = await licenseKey("restart");
    await kafka.stop();
    let accepted = 0;
    for (let i = 0; i < 20; i++) {
      const result = await collect(base, report([`HASH-R${i}`, "HASH-SHARED"]), key);
      assert.equal(result.status, 202);
      accepted += result.body.accepted;
    }
    const stopping = Date.now();
    await service.stop();
    // the spool is offered to Kafka for its hand-over time (2 s here), then the Kafka threads end once closed (2 s at most each)
    const took = Date.now() - stopping;
    assert.ok(took >= 1900 && took < 8000, `with Kafka down, the service took ${took} ms to stop`);
    await startPlatform(); // Kafka still down: the spool waits on disk
    await kafka.start();
    const counted = await usageWhen(base, key, range(), (u) => u.opens >= accepted, 120_000);
    assert.equal(counted.opens, accepted);
    assert.equal(counted.documents, 21);
  });
});
