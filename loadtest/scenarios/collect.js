// POST /v1/collect: one usage report of EVENTS events (default 1, as the
// reference client sends; 10 to load the usage pipeline), each with a
// document id of its own.
import { BASE_URL, expectStatus, http } from "./lib/http.js";
import { httpOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

const EVENTS = Number(__ENV.EVENTS || 1);
const LICENSE_KEY = __ENV.LICENSE_KEY || "community-and-eval-agplv3";
const RUN = Date.now().toString(36);
const HEADERS = { "Content-Type": "application/json", "X-License-Key": LICENSE_KEY };
const BROWSER = { userAgent: "k6", currentUrl: "https://app.example.test/editor", hostname: "app.example.test", screenSize: { width: 1920, height: 1080 } };

export default function () {
  const timestamp = new Date().toISOString();
  const events = [];
  for (let e = 0; e < EVENTS; e++) events.push({ timestamp, documentId: `HASH-${RUN}-${__VU}-${__ITER}-${e}`, documentCreatedAt: null });
  const body = JSON.stringify({ superdocVersion: "0.20.0", browserInfo: BROWSER, events });
  expectStatus("collect", 202, http.post(`${BASE_URL}/v1/collect`, body, { headers: HEADERS, tags: { name: "POST /v1/collect" } }));
}
