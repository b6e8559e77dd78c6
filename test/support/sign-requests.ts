/**
 * Request bodies for POST /v1/sign and /v1/verify, and a JSON POST helper,
 * for the signing integration tests and bench:sign. Not a test file itself.
 */
import type { HttpResult } from "./key-flow.js";

export const AUDIT_TRAIL = [
  { type: "ready", timestamp: "2026-11-21T09:00:00Z" },
  { type: "scroll", timestamp: "2026-11-21T09:00:20Z", data: { percent: 100 } },
  { type: "field_change", timestamp: "2026-11-21T09:00:40Z", data: { fieldId: "fullName", value: "Jane Doe", previousValue: "" } },
  { type: "submit", timestamp: "2026-11-21T09:01:00Z" },
];

export const SIGNER = { email: "jane.doe@example.test", name: "Jane Doe", ip: "203.0.113.7", userAgent: "Mozilla/5.0 (test)" };

/** A valid sign request for `document` (bytes, or a URL to fetch), with `overrides` merged on top. */
export function signBody(document: Buffer | { url: string }, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    document: Buffer.isBuffer(document) ? { base64: document.toString("base64") } : document,
    signer: SIGNER,
    auditTrail: AUDIT_TRAIL,
    ...overrides,
  };
}

export async function postJson(base: string, path: string, body: unknown, apiKey?: string): Promise<HttpResult> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
  const response = await fetch(`${base}${path}`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** The signed PDF of a 200 answer of /v1/sign. */
export function signedPdfOf(result: HttpResult): Buffer {
  if (result.status !== 200) throw new Error(`/v1/sign answered ${result.status}: ${JSON.stringify(result.body)}`);
  return Buffer.from(result.body.document.base64, "base64");
}
