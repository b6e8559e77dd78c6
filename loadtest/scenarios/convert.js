// POST /v1/convert?from=docx: the DOCX in DOCX_FILE as multipart `file`,
// with the API key in API_KEY; the answer must be the PDF.
import { check } from "k6";
import { BASE_URL, bearer, expectStatus, http } from "./lib/http.js";
import { httpOptions, required } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

const DOCX = open(required("DOCX_FILE"), "b");
const MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

export default function () {
  const response = expectStatus(
    "convert",
    200,
    http.post(`${BASE_URL}/v1/convert?from=docx`, { file: http.file(DOCX, "loadtest.docx", MIME) }, { headers: bearer(), tags: { name: "POST /v1/convert" } }),
  );
  check(response, { "convert answers a PDF": (r) => String(r.headers["Content-Type"]).startsWith("application/pdf") });
}
