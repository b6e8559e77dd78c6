// Traces of the platform as a real OpenTelemetry Collector receives them
// (OTLP over HTTP, scripts/testenv/otelcol): a caller's traceparent is
// honoured, the route and its authentication are spans of one trace, a failed
// request carries its error, log lines name their trace, the trace goes on
// over gRPC into the service the gateway calls and into a signing worker (its
// HSM, TSA, OCSP and CRL calls inside), and the aggregator's span that counts
// a report links back to it through Kafka.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { remoteHealthCheck } from "../../services/grpc/grpc-health-client.js";
import { makeDocx } from "../support/docx-fixtures.js";
import { startKafka, type KafkaBroker } from "../support/kafka.js";
import { call, codeIn } from "../support/key-flow.js";
import { startOtelCollector, type CollectedSpan, type OtelCollector } from "../support/otel-collector.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { startPkiPlatform, type PkiPlatform } from "../support/pki-platform.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { freePort } from "../support/ports.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { postJson, signBody } from "../support/sign-requests.js";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm.js";
import { startTestTsa, type TestTsa } from "../support/tsa.js";
import { kafkaModeEnv, report } from "../support/usage-reports.js";
import { answers, plaintextTransport, startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;
const ERROR = 2;

/** A caller's span: the traceparent header it sends, and its ids. */
function callerSpan() {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The span of that name among `spans`; fails naming those there are. */
function spanNamed(spans: CollectedSpan[], name: string): CollectedSpan {
  return spans.find((s) => s.name === name) ?? assert.fail(`no span ${name} in ${spans.map((s) => s.name).join(", ")}`);
}

const exportingTo = (collector: OtelCollector) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpHttpEndpoint, OTEL_BSP_SCHEDULE_DELAY: "100", LOG_LEVEL: "info" });

describe("traces of one process (a key in SoftHSM2, a TSA)", () => {
  let collector: OtelCollector;
  let platform: Platform;
  let token: SoftHsmToken;
  let tsa: TestTsa;
  let pinDir: string;
  const ofTrace = (traceId: string, count: number) => collector.waitForSpans((spans) => spans.filter((s) => s.traceId === traceId).length >= count).then((spans) => spans.filter((s) => s.traceId === traceId));

  before(async () => {
    [collector, token, tsa] = await Promise.all([startOtelCollector(), createSoftHsmToken(), startTestTsa()]);
    pinDir = mkdtempSync(join(tmpdir(), "docservice-tracing-pin-"));
    writeFileSync(join(pinDir, "pin"), `${token.userPin}\n`);
    platform = await startPlatform({
      ...exportingTo(collector),
      CONVERSION_POOL_SIZE: "1",
      SIGNING_KEY_BACKEND: "pkcs11",
      PKCS11_MODULE: token.modulePath,
      PKCS11_TOKEN_LABEL: token.tokenLabel,
      PKCS11_KEY_LABEL: "ecdsa-p256",
      PKCS11_PIN_FILE: join(pinDir, "pin"),
      SIGNING_TSA_URL: tsa.url,
    });
  });
  after(async () => {
    await platform?.stop();
    await Promise.all([collector?.stop(), tsa?.stop(), token?.cleanup()]);
    rmSync(pinDir, { recursive: true, force: true });
  });

  test("one sign of a DOCX is one trace: the route, its conversion, and the signing job in its worker with the HSM's signature and the TSA inside", async () => {
    const caller = callerSpan();
    const signed = await fetch(`${platform.base}/v1/sign`, {
      method: "POST",
      headers: { Authorization: `Bearer ${platform.apiKey}`, "Content-Type": "application/json", traceparent: caller.traceparent },
      body: JSON.stringify(signBody(makeDocx(["Traced."]))),
    });
    assert.equal(signed.status, 200, await signed.text());
    // every span asserted below: the worker's and the main thread's arrive in batches of their own
    const expected = ["POST /v1/sign", "convert", "signing worker: sign", "pkcs11 sign", "tsa request"];
    const spans = await collector.waitForSpans((all) => expected.every((name) => all.some((s) => s.traceId === caller.traceId && s.name === name)));
    const ofTrace = spans.filter((s) => s.traceId === caller.traceId);
    const named = (name: string) => spanNamed(ofTrace, name);
    const route = named("POST /v1/sign");
    assert.equal(route.parentSpanId, caller.spanId);
    const convert = named("convert");
    assert.deepEqual([convert.parentSpanId, convert.attributes["docservice.conversion.source"], convert.attributes["docservice.conversion.target"]], [route.spanId, "docx", "pdf"]);
    const job = named("signing worker: sign");
    assert.equal(job.parentSpanId, route.spanId);
    const hsm = named("pkcs11 sign");
    const timestamp = named("tsa request");
    // inside the job, however deep the signing code nests them
    const ancestors = (span: CollectedSpan): string[] => {
      const parent = ofTrace.find((s) => s.spanId === span.parentSpanId);
      return parent ? [parent.spanId, ...ancestors(parent)] : [];
    };
    assert.ok(ancestors(hsm).includes(job.spanId), "the HSM's signature is inside the signing job");
    assert.ok(ancestors(timestamp).includes(job.spanId), "the TSA request is inside the signing job");
    assert.equal(timestamp.kind, CLIENT);
    // within the route's time: the conversion, timed on the same thread (a worker thread's clock starts at its own origin, and may disagree by milliseconds)
    assert.ok(BigInt(convert.startTimeUnixNano) >= BigInt(route.startTimeUnixNano) && BigInt(convert.endTimeUnixNano) <= BigInt(route.endTimeUnixNano));
  });

  test("a request is a server span under the caller's, its authentication a span inside it, and its log line names both", async () => {
    const caller = callerSpan();
    const answer = await fetch(`${platform.base}/v1/auth/key`, { headers: { Authorization: `Bearer ${platform.apiKey}`, traceparent: caller.traceparent } });
    assert.equal(answer.status, 200);
    const spans = await ofTrace(caller.traceId, 2);
    const route = spans.find((s) => s.name === "GET /v1/auth/key")!;
    assert.ok(route, spans.map((s) => s.name).join(", "));
    assert.deepEqual([route.parentSpanId, route.kind, route.service], [caller.spanId, SERVER, "docservice-all"]);
    assert.deepEqual([route.attributes["http.route"], route.attributes["http.response.status_code"], route.status.code], ["/v1/auth/key", 200, 0]);
    const authenticate = spans.find((s) => s.name === "authenticate")!;
    assert.equal(authenticate?.parentSpanId, route.spanId);

    // log lines are buffered, and written within a second
    const accessLine = () => platform.process.output().split("\n").find((l) => l.includes(`"requestId":"${answer.headers.get("x-request-id")}"`) && l.includes('"msg":"request"'));
    await waitFor(async () => accessLine() !== undefined, { what: "the access log line" });
    const line = accessLine()!;
    assert.deepEqual([JSON.parse(line).trace_id, JSON.parse(line).span_id], [caller.traceId, route.spanId]);
  });

  test("a request that fails carries its error code; one without traceparent starts a trace of its own", async () => {
    const caller = callerSpan();
    const refused = await fetch(`${platform.base}/v1/sign`, {
      method: "POST",
      headers: { Authorization: `Bearer ${platform.apiKey}`, "Content-Type": "application/json", traceparent: caller.traceparent },
      body: "{}",
    });
    assert.equal(refused.status, 400);
    const [route] = (await ofTrace(caller.traceId, 2)).filter((s) => s.name === "POST /v1/sign");
    assert.equal(route?.attributes["error.type"], "VALIDATION_ERROR");
    assert.equal(route?.attributes["http.response.status_code"], 400);

    const before = new Set((await collector.spans()).map((s) => s.traceId));
    const unauthenticated = await postJson(platform.base, "/v1/sign", {});
    assert.equal(unauthenticated.status, 401);
    const own = await collector.waitForSpans((spans) => spans.some((s) => s.name === "POST /v1/sign" && !before.has(s.traceId)));
    const root = own.find((s) => s.name === "POST /v1/sign" && !before.has(s.traceId))!;
    assert.equal(root.parentSpanId, "");
    const failed = own.find((s) => s.traceId === root.traceId && s.name === "authenticate")!;
    assert.deepEqual([failed.status.code, failed.status.message], [ERROR, "UNAUTHENTICATED"]);
  });
});

describe("traces across processes (gateway → KeyService over gRPC)", () => {
  let collector: OtelCollector;
  let apiKeyOfCaller: string | undefined;
  let keys: ServiceProcess;
  let gateway: ServiceProcess;
  let base: string;
  let dataDir: string;

  before(async () => {
    collector = await startOtelCollector();
    dataDir = mkdtempSync(join(tmpdir(), "docservice-tracing-"));
    const keysAddress = `127.0.0.1:${await freePort()}`;
    const keysHealthy = remoteHealthCheck(keysAddress, "docservice.v1.KeyService", 1000, plaintextTransport);
    keys = await startService("keys", { ...exportingTo(collector), HOST: "127.0.0.1", GRPC_PORT: keysAddress.split(":")[1]!, DOCSERVICE_DATA_DIR: dataDir }, () =>
      keysHealthy().then(() => true),
    );
    base = `http://127.0.0.1:${await freePort()}`;
    gateway = await startService("gateway", { ...exportingTo(collector), HOST: "127.0.0.1", PORT: new URL(base).port, KEYS_SERVICE_ADDR: keysAddress }, () => answers(`${base}/v1/health`));
  });
  after(async () => {
    await Promise.all([gateway?.stop(), keys?.stop()]);
    await collector?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("the key service's spans are in the gateway's trace, each under the span that called it", async () => {
    const email = "trace@example.test";
    assert.equal((await call(base, `/v1/auth/register?email=${email}`)).status, 200);
    const outbox = join(dataDir, "outbox");
    const code = codeIn(readFileSync(join(outbox, readdirSync(outbox).sort().at(-1)!), "utf8").replace(/=\n/g, ""));
    const apiKey = (await call(base, `/v1/auth/verify?email=${email}&code=${code}`)).body.apiKey as string;

    const caller = callerSpan();
    assert.equal((await fetch(`${base}/v1/auth/key`, { headers: { Authorization: `Bearer ${apiKey}`, traceparent: caller.traceparent } })).status, 200);
    // the two processes export on their own schedules: wait for the key service's two spans and the gateway's request span,
    // which the gateway ends last (its other spans were exported with it or before)
    const spans = await collector.waitForSpans(
      (all) =>
        all.filter((s) => s.traceId === caller.traceId && s.service === "docservice-keys").length >= 2 &&
        all.some((s) => s.traceId === caller.traceId && s.name === "GET /v1/auth/key"),
    );
    const ofTrace = spans.filter((s) => s.traceId === caller.traceId);
    const named = (name: string) => spanNamed(ofTrace, name);
    const route = named("GET /v1/auth/key");
    assert.deepEqual([route.service, route.parentSpanId], ["docservice-gateway", caller.spanId]);
    const authenticate = named("authenticate");
    const checked = named("docservice.v1.KeyService/Authenticate");
    assert.deepEqual([checked.service, checked.kind, checked.parentSpanId, checked.attributes["rpc.grpc.status_code"]], ["docservice-keys", SERVER, authenticate.spanId, 0]);
    const info = named("docservice.v1.KeyService/GetKeyInfo");
    assert.deepEqual([info.service, info.parentSpanId], ["docservice-keys", route.spanId]);
    apiKeyOfCaller = apiKey;
  });

  test("a caller's trace that is not sampled is recorded nowhere: the key service follows the gateway's decision, and makes no trace of its own", async () => {
    assert.ok(apiKeyOfCaller, "the API key of the test before");
    const before = (await collector.spans()).length;
    const unsampled = callerSpan();
    const headers = (traceparent: string) => ({ Authorization: `Bearer ${apiKeyOfCaller}`, traceparent });
    assert.equal((await fetch(`${base}/v1/auth/key`, { headers: headers(unsampled.traceparent.replace(/-01$/, "-00")) })).status, 200);
    // a sampled request after it: once its spans of both processes arrived, any of the first would have (each process exports in order)
    const sampled = callerSpan();
    assert.equal((await fetch(`${base}/v1/auth/key`, { headers: headers(sampled.traceparent) })).status, 200);
    const spans = await collector.waitForSpans((all) => ["docservice-gateway", "docservice-keys"].every((service) => all.some((s) => s.traceId === sampled.traceId && s.service === service)));
    const since = spans.slice(before).filter((s) => s.traceId !== sampled.traceId);
    assert.deepEqual(since.map((s) => `${s.service} ${s.name} ${s.traceId}`), [], "no span of the unsampled request, nor a trace started for it");
  });
});

describe("traces through Kafka (a report, and the aggregator that counts it)", () => {
  let collector: OtelCollector;
  let kafka: KafkaBroker;
  let redis: RedisServer;
  let platform: ServiceProcess;
  let base: string;
  let dataDir: string;

  before(async () => {
    [collector, kafka, redis] = await Promise.all([startOtelCollector(), startKafka(), startRedis()]);
    dataDir = mkdtempSync(join(tmpdir(), "docservice-tracing-kafka-"));
    base = `http://127.0.0.1:${await freePort()}`;
    const env = kafkaModeEnv({ port: new URL(base).port, dataDir, kafkaBrokers: kafka.brokers, redisUrl: redis.url }, exportingTo(collector));
    platform = await startService("all", env, () => answers(`${base}/v1/health`));
  });
  after(async () => {
    await platform?.stop();
    await Promise.all([collector?.stop(), kafka?.stop(), redis?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("a report's trace holds its write to Kafka, and the aggregator's span that applies it links back to that write", async () => {
    const caller = callerSpan();
    const answer = await fetch(`${base}/v1/collect`, {
      method: "POST",
      headers: { "Content-Type": "application/json", traceparent: caller.traceparent },
      body: JSON.stringify(report(["HASH-0000000A", "HASH-0000000B"])),
    });
    assert.equal(answer.status, 202);
    const linked = (span: CollectedSpan, producer: CollectedSpan) => span.links.some((l) => l.traceId === caller.traceId && l.spanId === producer.spanId);
    const spans = await collector.waitForSpans((all) => {
      const producer = all.find((s) => s.traceId === caller.traceId && s.name === "store usage events");
      return producer !== undefined && all.some((s) => s.name === "apply usage records" && linked(s, producer));
    }, 20_000);
    const route = spans.find((s) => s.traceId === caller.traceId && s.name === "POST /v1/collect")!;
    const producer = spans.find((s) => s.traceId === caller.traceId && s.name === "store usage events")!;
    assert.deepEqual([producer.parentSpanId, producer.kind, producer.attributes["docservice.usage.events"]], [route.spanId, PRODUCER, 2]);
    const apply = spans.find((s) => s.name === "apply usage records" && linked(s, producer))!;
    assert.deepEqual([apply.kind, apply.service, apply.attributes["messaging.destination.name"]], [CONSUMER, "docservice-all", "docservice.usage.v1"]);
  });
});

describe("traces of long-term signatures (a real PKI's OCSP and CRL, a TSA)", () => {
  let collector: OtelCollector;
  let started: PkiPlatform;
  const sign = (traceparent: string) =>
    fetch(`${started.platform.base}/v1/sign`, {
      method: "POST",
      headers: { Authorization: `Bearer ${started.platform.apiKey}`, "Content-Type": "application/json", traceparent },
      body: JSON.stringify(signBody(Buffer.from(pdf))),
    });
  let pdf: Uint8Array;

  before(async () => {
    collector = await startOtelCollector();
    started = await startPkiPlatform({ SIGNING_LEVEL: "B-LT", CONVERSION_POOL_SIZE: "1", ...exportingTo(collector) });
    pdf = await textPdf(1);
  });
  after(async () => {
    await started?.stop();
    await collector?.stop();
  });

  test("a sign that fails for want of revocation data is a failed trace, the fetch that failed inside it", async () => {
    // first, before any answer is cached for minutes
    const caller = callerSpan();
    await started.pki.stopRevocationServices();
    try {
      assert.equal((await sign(caller.traceparent)).status, 503);
    } finally {
      await started.pki.startRevocationServices();
    }
    // the fetches are the worker thread's spans, exported by the thread itself: they may arrive after the route's
    const spans = await collector.waitForSpans((all) => all.some((s) => s.traceId === caller.traceId && s.name === "POST /v1/sign") && all.some((s) => s.traceId === caller.traceId && s.name.startsWith("fetch ")));
    const ofTrace = spans.filter((s) => s.traceId === caller.traceId);
    const route = spanNamed(ofTrace, "POST /v1/sign");
    assert.deepEqual([route.status.code, route.attributes["error.type"]], [ERROR, "UNAVAILABLE"]);
    const fetches = ofTrace.filter((s) => s.name.startsWith("fetch "));
    assert.ok(fetches.length > 0 && fetches.every((s) => s.kind === CLIENT && s.status.code === ERROR && s.status.message === "UNAVAILABLE"), JSON.stringify(fetches.map((s) => [s.name, s.status])));
  });

  test("a B-LT sign fetches its revocation data in spans of its signing job", async () => {
    const caller = callerSpan();
    assert.equal((await sign(caller.traceparent)).status, 200);
    // the worker thread exports its spans itself, so they may arrive after the route's
    const spans = await collector.waitForSpans((all) => ["POST /v1/sign", "signing worker: sign"].every((name) => all.some((s) => s.traceId === caller.traceId && s.name === name)));
    const ofTrace = spans.filter((s) => s.traceId === caller.traceId);
    const job = spanNamed(ofTrace, "signing worker: sign");
    const fetched = ofTrace.filter((s) => s.name === "fetch OCSP response" || s.name === "fetch CRL");
    assert.ok(fetched.length > 0, ofTrace.map((s) => s.name).join(", "));
    for (const span of fetched) assert.deepEqual([span.kind, span.parentSpanId, span.attributes["server.address"], span.status.code], [CLIENT, job.spanId, "127.0.0.1", 0]);
  });
});
