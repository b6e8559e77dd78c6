import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, envDetector, detectResources, resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from "@opentelemetry/sdk-trace";
import { ConfigError } from "./config.js";
import { asServiceError } from "./errors.js";
import { VERSION } from "./version.js";

export { SpanKind };

/** Every span of the platform comes from this tracer: a no-op one until tracing is started. */
export const tracer = () => trace.getTracer("docservice", VERSION);

/** The service name spans are exported under; undefined while tracing is off. */
let tracedAs: string | undefined;

/** Whether spans are exported: when not, hot paths skip making them at all. */
export const isTracing = () => tracedAs !== undefined;

/** Whether the sampler decides a span with a parent as its parent was decided (the parentbased_* samplers, the default). */
let followsParent = false;

/**
 * Whether a span started now under `parent` may be recorded: not while
 * tracing is off, nor under a parent that was not sampled when the sampler
 * follows parents. Where it may not, hot paths make no span at all (a
 * non-recorded span still costs ids, an object and a context), and the
 * parent's context, active meanwhile, carries "not sampled" to the next hop.
 */
export function mayRecord(parent: Context = context.active()): boolean {
  if (!isTracing()) return false;
  if (!followsParent) return true;
  const span = trace.getSpanContext(parent);
  return !span || !trace.isSpanContextValid(span) || (span.traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** The span work gets where none is made: records nothing. */
const NOT_RECORDED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** What a worker thread passes to its own startTracing, to export its spans as this process does. */
export const tracedServiceName = () => tracedAs;

export interface Tracing {
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting traces over OTLP when the standard variables ask for it
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set,
 * OTEL_SDK_DISABLED not "true", OTEL_TRACES_EXPORTER absent or "otlp"):
 * W3C trace context, spans batched (OTEL_BSP_*), sampled by
 * OTEL_TRACES_SAMPLER (default parentbased_always_on) and its
 * OTEL_TRACES_SAMPLER_ARG. Without
 * them nothing is started, and every span is a no-op that costs a call.
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",")[0]!.trim();
  if (!endpoint || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true" || exporter !== "otlp") return undefined;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the role's name
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": serviceName, "service.version": VERSION }))
    .merge(detectResources({ detectors: [envDetector] }));
  const batching = {
    scheduledDelayMillis: positiveInteger(env, "OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: positiveInteger(env, "OTEL_BSP_EXPORT_TIMEOUT"),
    maxQueueSize: positiveInteger(env, "OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: positiveInteger(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
  };
  const processor = new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batching });
  const sampler = samplerFrom(env);
  followsParent = sampler instanceof ParentBasedSampler;
  const provider = new TracerProvider({ resource, sampler, spanProcessors: [processor] });
  trace.setGlobalTracerProvider(provider);
  tracedAs = serviceName;
  return { shutdown: () => provider.shutdown() };
}

/** A positive whole number from one of the specification's OTEL_BSP_* variables; unset: the SDK's default. */
function positiveInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new ConfigError([`${name} must be a positive whole number, got "${raw}"`]);
  return value;
}

/** The sampler OTEL_TRACES_SAMPLER names (the specification's values); an unknown one is refused, not ignored. */
export function samplerFrom(env: NodeJS.ProcessEnv): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim() || "parentbased_always_on";
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw ? Number(raw) : 1;
  if (name.includes("traceidratio") && !(ratio >= 0 && ratio <= 1)) throw new ConfigError([`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${raw}"`]);
  const samplers: Record<string, () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    parentbased_traceidratio: () => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
  };
  const make = samplers[name];
  if (!make) throw new ConfigError([`OTEL_TRACES_SAMPLER "${name}" is not one of ${Object.keys(samplers).join(", ")}`]);
  return make();
}

const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** The context a caller sent in `traceparent` (HTTP headers, gRPC metadata as a map, a Kafka record's headers); the active one when none. */
export function contextFrom(carrier: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), carrier, headerGetter);
}

/** A link to the span a `traceparent` names (a Kafka record's request), or none when it names none. */
export function linkTo(traceparent: string | undefined): Link[] {
  const span = traceparent ? trace.getSpanContext(contextFrom({ traceparent })) : undefined;
  return span ? [{ context: span }] : [];
}

/** The traceparent of the active span when it is sampled, for a record whose consumer links to it; none otherwise (a link to a span never exported leads nowhere). */
export function sampledTraceparent(): string | undefined {
  const span = trace.getSpanContext(context.active());
  return span && span.traceFlags & TraceFlags.SAMPLED ? traceHeaders().traceparent : undefined;
}

/** `traceparent` (and `tracestate`) of the active span, to send with a call; empty when there is none or tracing is off. */
export function traceHeaders(from: Context = context.active()): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(from, headers);
  return headers;
}

/**
 * Runs `work` in a span that is the active one meanwhile, and ends it: an
 * error is recorded on it (its code as the status message, never its text,
 * which may hold what a caller sent) and thrown on.
 */
export async function inSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes; parent?: Context; links?: Link[] }, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  if (!mayRecord(parent)) return context.with(parent, () => work(NOT_RECORDED));
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** An error on its span: the status ERROR with the error's code, and an exception event naming its type. */
export function markFailed(span: Span, error: unknown): void {
  const code = asServiceError(error).code;
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.addEvent("exception", { "exception.type": code });
}

/** trace_id and span_id of `span` for a log line; none when it is not recording (tracing off, or not sampled). */
export function traceFieldsOf(span: Span | undefined): { trace_id: string; span_id: string } | undefined {
  if (!span?.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The fields of the active span, for pino's mixin (an object, empty when there is none). */
export const activeTraceFields = () => traceFieldsOf(trace.getSpan(context.active())) ?? {};
