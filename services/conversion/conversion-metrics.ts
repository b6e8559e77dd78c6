import { Counter, Histogram } from "prom-client";
import { asServiceError } from "../core/errors.js";
import { exportScrapeGauges } from "../core/scrape-gauges.js";
import { serviceMetrics } from "../core/service-metrics.js";
import type { ConvertTarget } from "./convert-target.js";
import type { Converter } from "./converter.js";

/**
 * The converter's saturation on /metrics: conversions waiting for an instance
 * and conversions running, read at each scrape. Waiting above zero for long
 * means the pool is too small for the load; it is what conversion scales on.
 */
export function exportConverterLoad(converter: Converter, poolSize: number | undefined): void {
  exportScrapeGauges([
    { name: "docservice_conversion_waiting", help: "Conversions waiting for a free LibreOffice instance.", read: () => converter.load().waiting },
    { name: "docservice_conversion_in_flight", help: "Conversions being converted right now.", read: () => converter.load().converting },
    ...(poolSize === undefined ? [] : [{ name: "docservice_conversion_pool_size", help: "LibreOffice instances in the pool (CONVERSION_POOL_SIZE).", read: () => poolSize }]),
  ]);
}

const conversions = new Counter<"source" | "target" | "outcome">({
  name: "docservice_conversions_total",
  help: "Conversions by source format, target and outcome (converted, or the error code in lower case: timeout, unprocessable_document, …).",
  labelNames: ["source", "target", "outcome"],
  registers: [serviceMetrics],
});

const duration = new Histogram<"target">({
  name: "docservice_conversion_duration_seconds",
  help: "Time to convert a document, checks and queueing included, by target.",
  labelNames: ["target"],
  buckets: [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120],
  registers: [serviceMetrics],
});

/** pdf, pdf/a-2b, pdf/ua, pdf/a-3b+ua or docx: a handful of values, one per kind of output. */
export function targetName(target: ConvertTarget): string {
  if (target.to === "docx") return "docx";
  const parts = [target.pdfa && `a-${target.pdfa}`, target.pdfua && "ua"].filter(Boolean);
  return parts.length > 0 ? `pdf/${parts.join("+")}` : "pdf";
}

/**
 * The conversions held at each moment, summed over time. A scrape sees one
 * moment, and a pod with one LibreOffice instance is at that moment either
 * idle or full; the rate of this counter over a window is the mean number
 * held in it, which is what the conversion autoscaler acts on
 * (operator/conversion-demand.ts).
 */
let held = 0;
let heldSince = performance.now();
const heldSeconds = new Counter({
  name: "docservice_conversion_held_seconds_total",
  help: "Conversions held (from accepting one to answering it) summed over time, in seconds: its rate over a window is the mean number held.",
  registers: [serviceMetrics],
  collect() {
    holdMore(0);
  },
});

/** Adds what was held since the last change, then changes the number held by `change`. */
function holdMore(change: number): void {
  const now = performance.now();
  if (held > 0) heldSeconds.inc((held * (now - heldSince)) / 1000);
  heldSince = now;
  held += change;
}

/** Counts a conversion, its duration and the time it was held once it has ended, either way. */
export async function measuredConversion<T>(source: string, target: ConvertTarget, convert: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const labels = { source, target: targetName(target) };
  // exported at 0 from the first conversion of its kind, so that increase() sees the first timeout too (an alert's trigger)
  conversions.inc({ ...labels, outcome: "timeout" }, 0);
  holdMore(1);
  try {
    const output = await convert();
    conversions.inc({ ...labels, outcome: "converted" });
    return output;
  } catch (error) {
    conversions.inc({ ...labels, outcome: asServiceError(error).code.toLowerCase() });
    throw error;
  } finally {
    holdMore(-1);
    duration.observe({ target: labels.target }, (performance.now() - started) / 1000);
  }
}
