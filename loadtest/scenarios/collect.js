// POST /v1/collect: one usage report of EVENTS events (default 1, as the
// reference client sends; 10 to load the usage pipeline), each with a
// document id of its own.
import { collectRequest } from "./lib/requests.js";
import { httpOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

export default collectRequest();
