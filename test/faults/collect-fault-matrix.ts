/**
 * The usage pipeline under load through single faults, counted exactly: split
 * mode (gateway, telemetry service, aggregator as processes of their own)
 * with a real Kafka 3.9 and a real Redis (append-only file, fsync every
 * second, as docs/telemetry.md recommends). Each round has a license key of its own
 * and sends reports of one event each, every event a document of its own, so
 * a count of opens above the distinct documents is an event counted twice,
 * and below the acknowledged reports an event lost. One fault per round:
 *   kafka-kill        the broker SIGKILLed mid-load, started again `kafkaDownSeconds` later
 *   aggregator-kill   the aggregator SIGKILLed mid-batch and started again
 *   redis-restart     Redis stopped (SIGTERM) and started again
 *   redis-kill        Redis SIGKILLed and started again
 *   telemetry-kill    Kafka paused so the spool fills, the telemetry service SIGKILLed
 *                     with its spool holding events, Kafka resumed, the service started again
 *   kafka-pause       the broker paused (SIGSTOP) `kafkaPauseSeconds`, longer than the
 *                     direct timeout, then resumed
 * Gate per round: opens == distinct documents (nothing twice) and
 * acknowledged ≤ opens ≤ acknowledged + in doubt, where in doubt are the
 * reports answered 5xx or not at all while the telemetry service was being
 * killed (their events may have reached Kafka before it died, which the client
 * never learns); in every other round, opens == acknowledged exactly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel } from "kafkajs";
import { remoteHealthCheck } from "../../services/grpc/grpc-health-client.js";
import { startKafka, type KafkaBroker } from "../support/kafka.js";
import { freePort } from "../support/ports.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { answers, plaintextTransport, startService, type ServiceProcess } from "../support/service-process.js";
import { ADMIN_TOKEN, registerLicenseKey, report, usage } from "../support/usage-reports.js";

export interface FaultMatrixOptions {
  /** Load before the fault and after it, each. */
  loadSeconds: number;
  /** How long the broker stays down after its SIGKILL. */
  kafkaDownSeconds: number;
  /** How long the broker stays paused (TELEMETRY_DIRECT_TIMEOUT_MS is `directTimeoutMs`). */
  kafkaPauseSeconds: number;
  directTimeoutMs: number;
  /** Concurrent reports in flight. */
  connections: number;
  /** The longest wait for the counts to settle after a round's load. */
  convergeTimeoutSeconds: number;
  log(line: string): void;
}

export const FAULTS = ["kafka-kill", "aggregator-kill", "redis-restart", "redis-kill", "telemetry-kill", "kafka-pause"] as const;
export type Fault = (typeof FAULTS)[number];

export interface RoundResult {
  fault: Fault;
  acknowledged: number;
  /** Answers 5xx (503 included). */
  refused: number;
  /** Reports that got no answer (connection refused or reset). */
  unanswered: number;
  /** Of refused and unanswered, those whose event may be counted all the same. */
  inDoubt: number;
  opens: number;
  documents: number;
  /** From the end of the load until the counts held the gate, undefined when they never did. */
  convergeSeconds: number | undefined;
  exact: boolean;
}

const TOPIC = "docservice.usage.v1";
const PARTITIONS = 3;

/** The platform of the fault matrix, with what each fault needs to reach. */
class SplitPlatform {
  telemetry!: ServiceProcess;
  aggregator!: ServiceProcess;
  gateway!: ServiceProcess;
  base = "";
  private telemetryPort = 0;
  private aggregatorPort = 0;
  private gatewayPort = 0;
  private readonly dataDir = mkdtempSync(join(tmpdir(), "docservice-faults-"));

  constructor(
    readonly kafka: KafkaBroker,
    readonly redis: RedisServer,
    private readonly options: FaultMatrixOptions,
  ) {}

  async start(): Promise<void> {
    [this.telemetryPort, this.aggregatorPort, this.gatewayPort] = await Promise.all([freePort(), freePort(), freePort()]);
    this.base = `http://127.0.0.1:${this.gatewayPort}`;
    await this.startTelemetry();
    await this.startAggregator();
    this.gateway = await startService(
      "gateway",
      { HOST: "127.0.0.1", PORT: String(this.gatewayPort), TELEMETRY_SERVICE_ADDR: `127.0.0.1:${this.telemetryPort}`, DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: "warn" },
      () => answers(`${this.base}/v1/health`),
    );
  }

  async startTelemetry(): Promise<void> {
    const healthy = remoteHealthCheck(`127.0.0.1:${this.telemetryPort}`, "docservice.v1.TelemetryService", 1000, plaintextTransport);
    this.telemetry = await startService("telemetry", { ...this.backendEnv(), GRPC_PORT: String(this.telemetryPort), DOCSERVICE_DATA_DIR: this.dataDir }, () => healthy().then(() => true));
  }

  async startAggregator(): Promise<void> {
    this.aggregator = await startService("aggregator", { ...this.backendEnv(), PORT: String(this.aggregatorPort) }, () => answers(`http://127.0.0.1:${this.aggregatorPort}/metrics`));
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.gateway?.stop(), this.telemetry?.stop(), this.aggregator?.stop()]);
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  private backendEnv(): Record<string, string> {
    return {
      HOST: "127.0.0.1",
      KAFKA_BROKERS: this.kafka.brokers.join(","),
      TELEMETRY_TOPIC: TOPIC,
      REDIS_URL: this.redis.url,
      DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
      TELEMETRY_DIRECT_TIMEOUT_MS: String(this.options.directTimeoutMs),
      LOG_LEVEL: "warn",
    };
  }
}

/** What a closed loop of reports got back. */
interface LoadTally {
  acknowledged: number;
  refused: number;
  unanswered: number;
  /** Refused or unanswered while `doubtful` was set. */
  inDoubt: number;
}

/** Reports of one new document each, `connections` at a time, until stopped; every report's fate is tallied. */
function startLoad(base: string, licenseKey: string, connections: number) {
  const tally: LoadTally = { acknowledged: 0, refused: 0, unanswered: 0, inDoubt: 0 };
  let running = true;
  let doubtful = false;
  let sent = 0;
  const unexpected: string[] = [];
  const worker = async () => {
    while (running) {
      const body = JSON.stringify(report([`FAULT-${licenseKey}-${sent++}`]));
      let status = 0;
      try {
        const response = await fetch(`${base}/v1/collect`, { method: "POST", headers: { "Content-Type": "application/json", "X-License-Key": licenseKey }, body });
        status = response.status;
        const text = await response.text();
        if (status !== 202 && status < 500) unexpected.push(`${status} ${text}`);
      } catch {
        status = 0;
      }
      if (status === 202) tally.acknowledged++;
      else if (status >= 500 || status === 0) {
        if (status === 0) tally.unanswered++;
        else tally.refused++;
        if (doubtful) tally.inDoubt++;
        await sleep(20); // a refused report comes back at once: do not spin
      }
    }
  };
  const workers = Array.from({ length: connections }, worker);
  return {
    tally,
    /** Reports refused or unanswered from now until `doubt(false)` may have been counted. */
    doubt(on: boolean) {
      doubtful = on;
    },
    async stop(): Promise<LoadTally> {
      running = false;
      await Promise.all(workers);
      if (unexpected.length > 0) throw new Error(`answers other than 202 or 5xx: ${unexpected.slice(0, 3).join("; ")}`);
      return tally;
    },
  };
}

/** Runs every round (or those named) and returns their results; the caller prints and judges them. */
export async function runCollectFaultMatrix(options: FaultMatrixOptions, faults: readonly Fault[] = FAULTS): Promise<RoundResult[]> {
  const [kafka, redis] = await Promise.all([startKafka(), startRedis({ persistent: true })]);
  const platform = new SplitPlatform(kafka, redis, options);
  try {
    const admin = new Kafka({ clientId: "fault-matrix", brokers: kafka.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
    await admin.disconnect();
    await platform.start();
    const results: RoundResult[] = [];
    for (const fault of faults) {
      const result = await runRound(platform, fault, options);
      options.log(formatRound(result));
      results.push(result);
    }
    return results;
  } finally {
    await platform.stop();
    await Promise.allSettled([kafka.stop(), redis.remove()]);
  }
}

async function runRound(platform: SplitPlatform, fault: Fault, options: FaultMatrixOptions): Promise<RoundResult> {
  const licenseKey = await registerLicenseKey(platform.base, `fault matrix: ${fault}`);
  const load = startLoad(platform.base, licenseKey, options.connections);
  const { kafka, redis } = platform;
  await sleep(options.loadSeconds * 1000);
  switch (fault) {
    case "kafka-kill":
      await kafka.stop("SIGKILL");
      await sleep(options.kafkaDownSeconds * 1000);
      await kafka.start();
      break;
    case "aggregator-kill":
      await platform.aggregator.stop("SIGKILL");
      await platform.startAggregator();
      break;
    case "redis-restart":
    case "redis-kill":
      await redis.stop(fault === "redis-kill" ? "SIGKILL" : "SIGTERM");
      await redis.start();
      break;
    case "telemetry-kill":
      kafka.pause();
      await sleep(options.directTimeoutMs * 3); // reports go to the spool
      load.doubt(true);
      await platform.telemetry.stop("SIGKILL");
      kafka.resume();
      await platform.startTelemetry();
      load.doubt(false);
      break;
    case "kafka-pause":
      kafka.pause();
      await sleep(options.kafkaPauseSeconds * 1000);
      kafka.resume();
      break;
  }
  await sleep(options.loadSeconds * 1000);
  const tally = await load.stop();
  const settled = Date.now();
  const today = new Date().toISOString().slice(0, 10);
  const holds = (opens: number, documents: number) => opens === documents && opens >= tally.acknowledged && opens <= tally.acknowledged + tally.inDoubt;
  let counts = { opens: 0, documents: 0 };
  let convergeSeconds: number | undefined;
  // the gate must hold, and still hold a few seconds later (a late second count would break it)
  for (let stable = 0; stable < 3 && Date.now() - settled < options.convergeTimeoutSeconds * 1000; await sleep(1000)) {
    try {
      const answer = await usage(platform.base, licenseKey, today, today);
      if (answer.status !== 200) continue;
      counts = { opens: answer.body.opens, documents: answer.body.documents };
    } catch {
      continue;
    }
    if (!holds(counts.opens, counts.documents)) {
      stable = 0;
      convergeSeconds = undefined;
      continue;
    }
    convergeSeconds ??= (Date.now() - settled) / 1000;
    stable++;
  }
  return { fault, ...tally, ...counts, convergeSeconds, exact: holds(counts.opens, counts.documents) && convergeSeconds !== undefined };
}

export const TABLE_HEADER =
  "| fault | acknowledged (202) | 5xx | unanswered | in doubt | counted (opens) | distinct documents expected | counted | converged in | exact |\n|---|---|---|---|---|---|---|---|---|---|";

export function formatRound(r: RoundResult): string {
  const expected = r.inDoubt > 0 ? `${r.acknowledged}–${r.acknowledged + r.inDoubt}` : String(r.acknowledged);
  const converged = r.convergeSeconds === undefined ? "never" : `${r.convergeSeconds.toFixed(1)} s`;
  return `| ${r.fault} | ${r.acknowledged} | ${r.refused} | ${r.unanswered} | ${r.inDoubt} | ${r.opens} | ${expected} | ${r.documents} | ${converged} | ${r.exact ? "yes" : "NO"} |`;
}
