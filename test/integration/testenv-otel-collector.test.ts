// Self-test of the OpenTelemetry Collector of the test environment
// (scripts/testenv/otelcol, test/support/otel-collector.ts): a trace exported
// as OTLP/JSON over HTTP is read back exactly from the collector's file
// exporter, and a malformed export is refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startOtelCollector, type CollectedSpan, type OtelCollector } from "../support/otel-collector.js";
import { canConnect } from "../support/wait.js";

const TRACE_ID = "5b8efff798038103d269b633813fc60c";
const PARENT_ID = "eee19b7ec3c1b174";
const CHILD_ID = "eee19b7ec3c1b173";
const LINKED_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const LINKED_SPAN_ID = "b7ad6b7169203331";

function keyValue(key: string, value: object) {
  return { key, value };
}

/** One ExportTraceServiceRequest in OTLP/JSON: a server span and a client span under it. */
const EXPORT = {
  resourceSpans: [
    {
      resource: {
        attributes: [keyValue("service.name", { stringValue: "testenv-otel" }), keyValue("service.version", { stringValue: "1.2.3" })],
      },
      scopeSpans: [
        {
          scope: { name: "docservice-testenv", version: "0.0.1" },
          spans: [
            {
              traceId: TRACE_ID,
              spanId: PARENT_ID,
              name: "POST /v1/sign",
              kind: 2, // SPAN_KIND_SERVER
              startTimeUnixNano: "1764331200000000000",
              endTimeUnixNano: "1764331200250000000",
              attributes: [
                keyValue("http.request.method", { stringValue: "POST" }),
                keyValue("http.response.status_code", { intValue: "200" }),
                keyValue("docservice.cached", { boolValue: false }),
                keyValue("docservice.ratio", { doubleValue: 0.5 }),
              ],
              status: { code: 1 }, // STATUS_CODE_OK
            },
            {
              traceId: TRACE_ID,
              spanId: CHILD_ID,
              parentSpanId: PARENT_ID,
              name: "SigningService/Sign",
              kind: 3, // SPAN_KIND_CLIENT
              startTimeUnixNano: "1764331200010000000",
              endTimeUnixNano: "1764331200240000000",
              attributes: [keyValue("rpc.system", { stringValue: "grpc" })],
              events: [
                {
                  timeUnixNano: "1764331200020000000",
                  name: "retry",
                  attributes: [keyValue("attempt", { intValue: "2" })],
                },
              ],
              links: [{ traceId: LINKED_TRACE_ID, spanId: LINKED_SPAN_ID }],
              status: { code: 2, message: "deadline exceeded" }, // STATUS_CODE_ERROR
            },
          ],
        },
      ],
    },
  ],
};

const EXPECTED: CollectedSpan[] = [
  {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    parentSpanId: "",
    name: "POST /v1/sign",
    kind: 2,
    status: { code: 1, message: "" },
    attributes: {
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "docservice.cached": false,
      "docservice.ratio": 0.5,
    },
    events: [],
    links: [],
    service: "testenv-otel",
    startTimeUnixNano: "1764331200000000000",
    endTimeUnixNano: "1764331200250000000",
  },
  {
    traceId: TRACE_ID,
    spanId: CHILD_ID,
    parentSpanId: PARENT_ID,
    name: "SigningService/Sign",
    kind: 3,
    status: { code: 2, message: "deadline exceeded" },
    attributes: { "rpc.system": "grpc" },
    events: [{ name: "retry", attributes: { attempt: 2 } }],
    links: [{ traceId: LINKED_TRACE_ID, spanId: LINKED_SPAN_ID }],
    service: "testenv-otel",
    startTimeUnixNano: "1764331200010000000",
    endTimeUnixNano: "1764331200240000000",
  },
];

function postTraces(collector: OtelCollector, body: string | Uint8Array, contentType = "application/json"): Promise<Response> {
  return fetch(`${collector.otlpHttpEndpoint}/v1/traces`, {
    method: "POST",
    headers: { "content-type": contentType },
    body,
  });
}

describe("OpenTelemetry Collector (otlp receiver, file exporter)", () => {
  let collector: OtelCollector;

  before(async () => {
    collector = await startOtelCollector();
  });

  after(async () => {
    await collector?.stop();
  });

  test("listens for OTLP over HTTP and gRPC on 127.0.0.1, with nothing received yet", async () => {
    assert.match(collector.otlpHttpEndpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    const [host, port] = collector.otlpGrpcEndpoint.split(":");
    assert.equal(await canConnect(Number(port), host), true, `gRPC receiver ${collector.otlpGrpcEndpoint}`);
    assert.deepEqual(await collector.spans(), []);
  });

  test("reads back an OTLP/JSON trace export exactly", async () => {
    const res = await postTraces(collector, JSON.stringify(EXPORT));
    assert.equal(res.status, 200, `${res.status} ${await res.clone().text()}\n${collector.log()}`);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    // Neither span was rejected.
    const answer = (await res.json()) as { partialSuccess?: { rejectedSpans?: string } };
    assert.equal(Number(answer.partialSuccess?.rejectedSpans ?? 0), 0);

    // Written before the receiver answered: no wait needed.
    assert.deepEqual(await collector.spans(), EXPECTED);
    const spans = await collector.waitForSpans((all) => all.some((span) => span.parentSpanId === PARENT_ID), 5_000);
    assert.deepEqual(spans, EXPECTED);
  });

  test("refuses a malformed export with 400 and records nothing of it", async () => {
    const count = (await collector.spans()).length;
    const json = await postTraces(collector, '{"resourceSpans": [{"scopeSpans": [');
    assert.equal(json.status, 400, await json.text());
    // Not hex: OTLP/JSON ids are hex strings.
    const badId = structuredClone(EXPORT);
    badId.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.traceId = "not-a-trace-id";
    const id = await postTraces(collector, JSON.stringify(badId));
    assert.equal(id.status, 400, await id.text());
    // Field 1 (resource_spans) said to be 5 bytes long, and 1 follows.
    const protobuf = await postTraces(collector, new Uint8Array([0x0a, 0x05, 0x01]), "application/x-protobuf");
    assert.equal(protobuf.status, 400, await protobuf.text());

    // A later valid export is still received, after the earlier ones only.
    const res = await postTraces(collector, JSON.stringify(EXPORT));
    assert.equal(res.status, 200, await res.text());
    const spans = await collector.spans();
    assert.equal(count, EXPECTED.length);
    assert.deepEqual(spans, [...EXPECTED, ...EXPECTED]);
  });

  test("waitForSpans names what it got when the spans never come", async () => {
    await assert.rejects(
      collector.waitForSpans((all) => all.some((span) => span.name === "never sent"), 200),
      /timed out after 200 ms .*received 4 span\(s\)/,
    );
  });
});
