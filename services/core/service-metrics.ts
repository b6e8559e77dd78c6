import { Registry } from "prom-client";

/**
 * Metrics of the backend services (spool size, consumer lag, …), served with
 * the gateway's own on /metrics, or by a backend role's metrics listener.
 */
export const serviceMetrics = new Registry();
