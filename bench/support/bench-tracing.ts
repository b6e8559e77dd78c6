/**
 * BENCH_TRACE_RATIO (a ratio from 0 to 1): the platform under test exports
 * traces, sampled at that ratio, to a real OpenTelemetry Collector started
 * here (test/support/otel-collector.ts), so a benchmark prints the cost of
 * tracing when on. Unset: tracing is off, as it is by default.
 */
import { startOtelCollector, type OtelCollector } from "../../test/support/otel-collector.js";

export interface BenchTracing {
  /** The platform's OTEL_* variables (none when off). */
  env: Record<string, string>;
  /** One line for the benchmark's header. */
  describe: string;
  /** Spans the collector received, for the benchmark's end ("" when off). */
  summary(): Promise<string>;
  stop(): Promise<void>;
}

export async function benchTracing(): Promise<BenchTracing> {
  const raw = process.env.BENCH_TRACE_RATIO;
  if (raw === undefined || raw === "") {
    return { env: {}, describe: "tracing: off (the default; BENCH_TRACE_RATIO=0.1 measures it on)", summary: async () => "", stop: async () => {} };
  }
  const ratio = Number(raw);
  if (!(ratio >= 0 && ratio <= 1)) throw new Error(`BENCH_TRACE_RATIO must be a ratio from 0 to 1, got "${raw}"`);
  const collector: OtelCollector = await startOtelCollector();
  return {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpHttpEndpoint, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: String(ratio) },
    describe: `tracing: on, ${ratio} of the traces sampled (parentbased_traceidratio), exported over OTLP to an OpenTelemetry Collector on this machine (its CPU counts as shared)`,
    summary: async () => `tracing: the collector received ${(await collector.spans()).length} spans`,
    stop: () => collector.stop(),
  };
}
