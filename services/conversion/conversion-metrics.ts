import { Gauge } from "prom-client";
import { serviceMetrics } from "../core/service-metrics.js";
import type { Converter } from "./converter.js";

/**
 * The converter's saturation on /metrics: conversions waiting for an instance
 * and conversions running, read at each scrape. Waiting above zero for long
 * means the pool is too small for the load; it is what conversion scales on.
 * Registered again (replacing the earlier ones) when a converter is provisioned again.
 */
export function exportConverterLoad(converter: Converter, poolSize: number | undefined): void {
  const gauges = [
    { name: "docservice_conversion_waiting", help: "Conversions waiting for a free LibreOffice instance.", read: () => converter.load().waiting },
    { name: "docservice_conversion_in_flight", help: "Conversions being converted right now.", read: () => converter.load().converting },
    ...(poolSize === undefined ? [] : [{ name: "docservice_conversion_pool_size", help: "LibreOffice instances in the pool (CONVERSION_POOL_SIZE).", read: () => poolSize }]),
  ];
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
