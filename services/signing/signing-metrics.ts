import { Counter } from "prom-client";
import { exportScrapeGauges } from "../core/scrape-gauges.js";
import { serviceMetrics } from "../core/service-metrics.js";
import type { SignatureLevel } from "./model.js";

export interface SigningLoad {
  /** Worker threads running. */
  workers: number;
  /** Of them, those holding at least one task. */
  busy: number;
  /** Sign, verify and extend tasks handed to the workers and not yet done. */
  tasks: number;
  /** Tasks in flight beyond which new ones are refused with 503 (SIGNING_QUEUE_LIMIT). */
  taskLimit: number;
}

/** The signers' saturation on /metrics, read at each scrape: busy workers, and tasks against the limit that turns them away. */
export function exportSigningLoad(load: () => SigningLoad): void {
  exportScrapeGauges([
    { name: "docservice_signing_workers", help: "Signing worker threads.", read: () => load().workers },
    { name: "docservice_signing_workers_busy", help: "Signing worker threads holding a task.", read: () => load().busy },
    { name: "docservice_signing_tasks_in_flight", help: "Sign, verify and timestamp tasks in the signing workers.", read: () => load().tasks },
    { name: "docservice_signing_tasks_limit", help: "Tasks in flight beyond which the signers answer 503 (SIGNING_QUEUE_LIMIT).", read: () => load().taskLimit },
  ]);
}

const documentsSigned = new Counter<"level">({
  name: "docservice_signing_documents_signed_total",
  help: "Documents signed, by PAdES level (B-B, B-T, B-LT, B-LTA); a replayed request is not counted again.",
  labelNames: ["level"],
  registers: [serviceMetrics],
});

const keyErrors = new Counter({
  name: "docservice_signing_key_errors_total",
  help: "Signing key failures: the HSM (PKCS#11) refused or did not answer a session or a signature.",
  registers: [serviceMetrics],
});

export const countSigned = (level: SignatureLevel) => documentsSigned.inc({ level });
export const countKeyError = () => keyErrors.inc();
