// A real OpenTelemetry Collector for the tests: the minimal distribution that
// scripts/testenv/setup.sh builds from scripts/testenv/otelcol (the OTLP
// receiver and the file exporter, nothing else). It receives OTLP over HTTP
// (POST <otlpHttpEndpoint>/v1/traces, protobuf or JSON) and gRPC, and writes
// every batch of spans it receives as one line of OTLP JSON to a file, which
// spans() reads back.
import { readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { cacheBin } from "./cache.js";
import { startDaemon } from "./daemon.js";
import { freePort } from "./ports.js";
import { canConnect, waitFor } from "./wait.js";

export type AttributeValue = string | number | boolean;

/** One span as the collector received it, from its OTLP JSON. */
export interface CollectedSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error; message "" when none. */
  status: { code: number; message: string };
  attributes: Record<string, AttributeValue>;
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  links: { traceId: string; spanId: string }[];
  /** The resource attribute service.name ("" when absent). */
  service: string;
  /** Nanoseconds since the Unix epoch, as the decimal string OTLP JSON carries (past 2^53, so not a number). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

export interface OtelCollector {
  /** Base URL of the OTLP/HTTP receiver, e.g. http://127.0.0.1:PORT (traces go to /v1/traces). */
  otlpHttpEndpoint: string;
  /** host:port of the OTLP/gRPC receiver. */
  otlpGrpcEndpoint: string;
  /**
   * Every span received so far, in the order received. An export the
   * receiver has answered (HTTP 200, gRPC OK) is already in the file: the
   * file exporter writes before the receiver answers, unbuffered (see the config).
   */
  spans(): Promise<CollectedSpan[]>;
  /** Polls spans() until `predicate` holds for them (default timeout 10 s) and returns them. */
  waitForSpans(predicate: (spans: CollectedSpan[]) => boolean, timeoutMs?: number): Promise<CollectedSpan[]>;
  /** SIGTERM (the collector shuts down its pipeline), then removes the config and the span file. */
  stop(): Promise<void>;
  /** The collector's own log so far (stderr), for failure messages. */
  log(): string;
}

// The parts of OTLP JSON (opentelemetry-proto's JSON mapping) read here.
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  /** int64: a decimal string in OTLP JSON (a number is accepted too). */
  intValue?: string | number;
  /** A number, or "NaN", "Infinity", "-Infinity". */
  doubleValue?: number | string;
  bytesValue?: string;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
interface OtlpSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: OtlpKeyValue[];
  events?: { name?: string; attributes?: OtlpKeyValue[] }[];
  links?: { traceId?: string; spanId?: string }[];
  status?: { code?: number; message?: string };
}
interface OtlpTracesData {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

/**
 * An attribute value as a plain value: strings, booleans and numbers as
 * themselves (an int64 as a number, exact up to 2^53), bytes as their base64
 * text, arrays and key-value lists as the JSON of their OTLP value.
 */
function attributeValue(value: OtlpAnyValue | undefined): AttributeValue {
  if (value === undefined) return "";
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return Number(value.doubleValue);
  if (value.bytesValue !== undefined) return value.bytesValue;
  if (value.arrayValue !== undefined || value.kvlistValue !== undefined) return JSON.stringify(value);
  return ""; // an empty AnyValue
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const result: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) result[key] = attributeValue(value);
  return result;
}

/** The spans of one line the file exporter wrote (one OTLP TracesData). */
export function parseTracesData(data: OtlpTracesData): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const resourceSpans of data.resourceSpans ?? []) {
    const service = attributes(resourceSpans.resource?.attributes)["service.name"];
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId ?? "",
          spanId: span.spanId ?? "",
          parentSpanId: span.parentSpanId ?? "",
          name: span.name ?? "",
          kind: span.kind ?? 0,
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((event) => ({ name: event.name ?? "", attributes: attributes(event.attributes) })),
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId ?? "", spanId: link.spanId ?? "" })),
          service: service === undefined ? "" : String(service),
          startTimeUnixNano: String(span.startTimeUnixNano ?? "0"),
          endTimeUnixNano: String(span.endTimeUnixNano ?? "0"),
        });
      }
    }
  }
  return spans;
}

/** Starts a throwaway collector (built by scripts/testenv/setup.sh) on free ports of 127.0.0.1. */
export async function startOtelCollector(): Promise<OtelCollector> {
  const bin = cacheBin("otelcol");
  const httpPort = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === httpPort) grpcPort = await freePort();
  let dir = "";

  const daemon = await startDaemon({
    name: `otelcol-${httpPort}`,
    command: bin,
    args: (tempDir) => {
      // The daemon's temp dir (removed by stop) holds the config and the span file.
      dir = tempDir;
      // JSON is YAML, which is what the collector reads.
      const config = {
        receivers: {
          otlp: {
            protocols: {
              http: { endpoint: `127.0.0.1:${httpPort}` },
              grpc: { endpoint: `127.0.0.1:${grpcPort}` },
            },
          },
        },
        exporters: {
          file: {
            path: join(tempDir, "spans.jsonl"),
            format: "json",
            // The file exporter buffers its writes and flushes every
            // flush_interval (1 s at least in effect: 0 means the default 1 s),
            // unless rotation is set: then each export is written to the file
            // at once, unbuffered, and flush_interval is ignored. So rotation is
            // set, with a size no test reaches (rotation would move spans to a
            // backup file that spans() does not read).
            rotation: { max_megabytes: 1024, max_backups: 1 },
          },
        },
        service: {
          // No Prometheus endpoint for the collector's own metrics (by
          // default on localhost:8888, where a second collector would collide).
          telemetry: { metrics: { level: "none" } },
          pipelines: { traces: { receivers: ["otlp"], exporters: ["file"] } },
        },
      };
      const configFile = join(tempDir, "config.yaml");
      writeFileSync(configFile, JSON.stringify(config, null, 2));
      return ["--config", `file:${configFile}`];
    },
    ready: () => canConnect(httpPort),
  });

  const spanFile = join(dir, "spans.jsonl");

  async function spans(): Promise<CollectedSpan[]> {
    let text: string;
    try {
      text = await readFile(spanFile, "utf8");
    } catch (err) {
      // Created on the first export.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    // Each export is one line; a line being written has no newline yet.
    const lines = text.split("\n").slice(0, -1);
    return lines.filter((line) => line.trim() !== "").flatMap((line) => parseTracesData(JSON.parse(line) as OtlpTracesData));
  }

  return {
    otlpHttpEndpoint: `http://127.0.0.1:${httpPort}`,
    otlpGrpcEndpoint: `127.0.0.1:${grpcPort}`,
    spans,

    async waitForSpans(predicate, timeoutMs = 10_000) {
      let found: CollectedSpan[] = [];
      await waitFor(
        async () => {
          found = await spans();
          return predicate(found);
        },
        { timeoutMs, intervalMs: 50, what: "the collector to receive the expected spans" },
      ).catch((err: Error) => {
        throw new Error(`${err.message}; received ${found.length} span(s): ${JSON.stringify(found.map((s) => s.name))}`, {
          cause: err,
        });
      });
      return found;
    },

    stop: () => daemon.stop(),

    log() {
      try {
        return readFileSync(join(dir, "output.log"), "utf8");
      } catch {
        return "";
      }
    },
  };
}
