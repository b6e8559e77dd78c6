import { Gauge } from "prom-client";
import { serviceMetrics } from "./service-metrics.js";

export interface ScrapeGauge {
  name: string;
  help: string;
  /** Read at each scrape, so the value is never stale and costs nothing between scrapes. */
  read(): number;
}

/**
 * Registers gauges whose value is read from their owner at each scrape. A
 * gauge of the same name registered before (the owner was provisioned again,
 * as tests do) is replaced, so /metrics reads the live owner.
 */
export function exportScrapeGauges(gauges: ScrapeGauge[]): void {
  for (const { name, help, read } of gauges) {
    serviceMetrics.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      registers: [serviceMetrics],
      collect() {
        this.set(read());
      },
    });
  }
}
