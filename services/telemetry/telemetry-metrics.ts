import { Counter, Gauge } from "prom-client";
import { exportScrapeGauges } from "../core/scrape-gauges.js";
import { serviceMetrics } from "../core/service-metrics.js";
import type { AggregatorProgress } from "./kafka/usage-aggregator.js";

const accepted = new Counter({
  name: "docservice_usage_events_accepted_total",
  help: "Usage events answered 202: durable in Kafka, the spool or the embedded store.",
  registers: [serviceMetrics],
});

const applied = new Counter({
  name: "docservice_usage_events_applied_total",
  help: "Usage events counted into the usage store (a redelivered batch is not counted again).",
  registers: [serviceMetrics],
});

const lag = new Gauge<"partition">({
  name: "docservice_usage_consumer_lag",
  help: "Usage records in Kafka not yet applied to the usage store, per partition.",
  labelNames: ["partition"],
  registers: [serviceMetrics],
});

export const countAccepted = (events: number) => accepted.inc(events);

/** Where an aggregator (on this thread, or reporting from its own) tells how far it is. */
export const aggregatorProgress: AggregatorProgress = {
  applied: (events) => applied.inc(events),
  lag(byPartition) {
    lag.reset();
    for (const [partition, records] of byPartition) lag.set({ partition: String(partition) }, records);
  },
};

export function exportSpoolSize(spooledBytes: () => number): void {
  exportScrapeGauges([{ name: "docservice_usage_spool_bytes", help: "Usage events waiting in the local spool for Kafka, in bytes.", read: spooledBytes }]);
}
