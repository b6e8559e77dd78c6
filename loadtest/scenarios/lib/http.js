import http from "k6/http";
import { check } from "k6";
import { required } from "./options.js";

export const BASE_URL = required("BASE_URL");

/** Authorization header of the API key in API_KEY. */
export function bearer() {
  return { Authorization: `Bearer ${required("API_KEY")}` };
}

/** Sends one request and checks its status; `what` names it in the check. */
export function expectStatus(what, status, response) {
  check(response, { [`${what} answers ${status}`]: (r) => r.status === status });
  return response;
}

export { http };
