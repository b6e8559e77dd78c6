// POST /v1/sign: the PDF in PDF_FILE (opened once, sent as base64) signed
// with the audit-trail certificate page, with the API key in API_KEY.
import { signRequest } from "./lib/requests.js";
import { httpOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

export default signRequest();
