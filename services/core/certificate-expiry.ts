import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { Gauge } from "prom-client";
import { serviceMetrics } from "./service-metrics.js";

/** Where each watched certificate is read from, by its name on /metrics. */
const sources = new Map<string, () => Buffer>();

/**
 * When each certificate the process relies on stops being valid, as a Unix
 * time, read at each scrape (a rotated file shows its new date at the next
 * one): alerts fire weeks before a certificate expires, not when calls fail.
 */
new Gauge<"certificate">({
  name: "docservice_certificate_expiry_timestamp_seconds",
  help: "When a certificate expires (notAfter, Unix seconds): internal-ca, component (mTLS), signing.",
  labelNames: ["certificate"],
  registers: [serviceMetrics],
  collect() {
    this.reset();
    for (const [certificate, read] of sources) {
      const expiry = expiryOf(read);
      if (expiry !== undefined) this.set({ certificate }, expiry);
    }
  },
});

/** The first certificate of `read()` (DER, or PEM whose first block counts), watched under `certificate`; replaces an earlier source of that name. */
export function watchCertificateExpiry(certificate: string, read: () => Buffer): void {
  sources.set(certificate, read);
}

/** A PEM file, read again at each scrape. */
export const pemFile = (path: string) => () => readFileSync(path);

function expiryOf(read: () => Buffer): number | undefined {
  try {
    return Math.floor(Date.parse(new X509Certificate(read()).validTo) / 1000);
  } catch {
    // a file being rotated, or gone: no sample rather than a wrong one
    return undefined;
  }
}
