// The requests of the HTTP scenarios, one function per route, shared by the
// single-route scenarios (sign.js, convert.js, collect.js) and ramp.js. Each
// opens its fixture in k6's init context, so a script calls the builders
// there (at the top level) and the returned function in its iterations.
import encoding from "k6/encoding";
import { check } from "k6";
import { BASE_URL, bearer, expectStatus, http } from "./http.js";
import { required } from "./options.js";

/** POST /v1/sign: the PDF in PDF_FILE (opened once, sent as base64) signed with the audit-trail certificate page, with the API key in API_KEY. */
export function signRequest() {
  const body = JSON.stringify({
    document: { base64: encoding.b64encode(open(required("PDF_FILE"), "b")) },
    signer: { email: "jane.doe@example.test", name: "Jane Doe", ip: "203.0.113.7", userAgent: "k6" },
    auditTrail: [
      { type: "ready", timestamp: "2026-11-21T09:00:00Z" },
      { type: "scroll", timestamp: "2026-11-21T09:00:20Z", data: { percent: 100 } },
      { type: "field_change", timestamp: "2026-11-21T09:00:40Z", data: { fieldId: "fullName", value: "Jane Doe", previousValue: "" } },
      { type: "submit", timestamp: "2026-11-21T09:01:00Z" },
    ],
  });
  const headers = { "Content-Type": "application/json", ...bearer() };
  return () => expectStatus("sign", 200, http.post(`${BASE_URL}/v1/sign`, body, { headers, tags: { name: "POST /v1/sign" } }));
}

const DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** POST /v1/convert?from=docx: the DOCX in DOCX_FILE as multipart `file`, with the API key in API_KEY; the answer must be the PDF. */
export function convertRequest() {
  const docx = open(required("DOCX_FILE"), "b");
  return () => {
    const response = expectStatus(
      "convert",
      200,
      http.post(`${BASE_URL}/v1/convert?from=docx`, { file: http.file(docx, "loadtest.docx", DOCX_MIME) }, { headers: bearer(), tags: { name: "POST /v1/convert" } }),
    );
    check(response, { "convert answers a PDF": (r) => String(r.headers["Content-Type"]).startsWith("application/pdf") });
    return response;
  };
}

const BROWSER = { userAgent: "k6", currentUrl: "https://app.example.test/editor", hostname: "app.example.test", screenSize: { width: 1920, height: 1080 } };

/**
 * POST /v1/collect: one usage report of EVENTS events (default 1, as the
 * reference client sends; 10 to load the usage pipeline) for LICENSE_KEY,
 * each event a document of its own: unique per run, virtual user and iteration.
 */
export function collectRequest() {
  const events = Number(__ENV.EVENTS || 1);
  const headers = { "Content-Type": "application/json", "X-License-Key": __ENV.LICENSE_KEY || "community-and-eval-agplv3" };
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  return () => {
    const timestamp = new Date().toISOString();
    const batch = [];
    for (let e = 0; e < events; e++) batch.push({ timestamp, documentId: `HASH-${run}-${__VU}-${__ITER}-${e}`, documentCreatedAt: null });
    const body = JSON.stringify({ superdocVersion: "0.20.0", browserInfo: BROWSER, events: batch });
    return expectStatus("collect", 202, http.post(`${BASE_URL}/v1/collect`, body, { headers, tags: { name: "POST /v1/collect" } }));
  };
}
