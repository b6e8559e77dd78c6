import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "./config.js";
import { isTracing, samplerFrom, startTracing } from "./tracing.js";

test("tracing starts only when an OTLP endpoint is set, and not when the SDK or its exporter is turned off", () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
  assert.equal(startTracing("docservice-test", {}), undefined);
  assert.equal(startTracing("docservice-test", { ...endpoint, OTEL_SDK_DISABLED: "true" }), undefined);
  assert.equal(startTracing("docservice-test", { ...endpoint, OTEL_TRACES_EXPORTER: "none" }), undefined);
  assert.equal(isTracing(), false);
});

test("the sampler is the one OTEL_TRACES_SAMPLER names, parent-based always-on by default", () => {
  assert.match(String(samplerFrom({})), /^ParentBased\{root=AlwaysOnSampler/);
  assert.match(String(samplerFrom({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" })), /^ParentBased\{root=TraceIdRatioBased\{0\.1\}/);
  assert.match(String(samplerFrom({ OTEL_TRACES_SAMPLER: "always_off" })), /^AlwaysOffSampler/);
  assert.throws(() => samplerFrom({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" }), ConfigError);
  assert.throws(() => samplerFrom({ OTEL_TRACES_SAMPLER: "jaeger_remote" }), /is not one of/);
});
