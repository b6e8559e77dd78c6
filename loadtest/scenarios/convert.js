// POST /v1/convert?from=docx: the DOCX in DOCX_FILE as multipart `file`,
// with the API key in API_KEY; the answer must be the PDF.
import { convertRequest } from "./lib/requests.js";
import { httpOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

export default convertRequest();
