// POST /v1/sign: the PDF in PDF_FILE (opened once, sent as base64) signed
// with the audit-trail certificate page, with the API key in API_KEY.
import encoding from "k6/encoding";
import { BASE_URL, bearer, expectStatus, http } from "./lib/http.js";
import { httpOptions, required } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

const PDF_BASE64 = encoding.b64encode(open(required("PDF_FILE"), "b"));
const BODY = JSON.stringify({
  document: { base64: PDF_BASE64 },
  signer: { email: "jane.doe@example.test", name: "Jane Doe", ip: "203.0.113.7", userAgent: "k6" },
  auditTrail: [
    { type: "ready", timestamp: "2026-11-21T09:00:00Z" },
    { type: "scroll", timestamp: "2026-11-21T09:00:20Z", data: { percent: 100 } },
    { type: "field_change", timestamp: "2026-11-21T09:00:40Z", data: { fieldId: "fullName", value: "Jane Doe", previousValue: "" } },
    { type: "submit", timestamp: "2026-11-21T09:01:00Z" },
  ],
});
const HEADERS = { "Content-Type": "application/json", ...bearer() };

export default function () {
  expectStatus("sign", 200, http.post(`${BASE_URL}/v1/sign`, BODY, { headers: HEADERS, tags: { name: "POST /v1/sign" } }));
}
