// GET /v1/auth/verify with a wrong code: the codes are e-mailed, so a load
// test cannot verify for real; 401 INVALID_CODE is the expected answer (and
// exercises the code lookup). The platform must run with
// RATE_LIMIT_VERIFY_PER_IP raised above the load.
import { BASE_URL, expectStatus, http } from "./lib/http.js";
import { httpOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = httpOptions();

http.setResponseCallback(http.expectedStatuses(401));
const RUN = Date.now().toString(36);

export default function () {
  const email = encodeURIComponent(`lt-${RUN}-${__VU}-${__ITER}@example.test`);
  expectStatus("verify with a wrong code", 401, http.get(`${BASE_URL}/v1/auth/verify?email=${email}&code=000000`, { tags: { name: "GET /v1/auth/verify" } }));
}
