// GET /v1/auth/register: a new address every request, so each one issues a
// code and sends (in embedded mode: writes) an e-mail. The platform must run
// with RATE_LIMIT_REGISTER_PER_IP raised above the load.
import { BASE_URL, expectStatus, http } from "./lib/http.js";
import { httpOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

const RUN = Date.now().toString(36);

export default function () {
  const email = encodeURIComponent(`lt-${RUN}-${__VU}-${__ITER}@example.test`);
  expectStatus("register", 200, http.get(`${BASE_URL}/v1/auth/register?email=${email}`, { tags: { name: "GET /v1/auth/register" } }));
}
