/**
 * @docservice/client: the DocService /v1 API, typed from the OpenAPI document
 * the gateway serves (openapi.json beside this file, generated from the route
 * tables; openapi-schema.ts generated from it by openapi-typescript).
 *
 * Calls return `{ data, error, response }` (openapi-fetch): on a 2xx `data` is
 * the typed answer, otherwise `error` is the platform's JSON error body
 * (`DocServiceError`: code, message, requestId, details). Only a failure to
 * reach the platform at all throws.
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, operations, paths } from "./openapi-schema.js";

export type { components, operations, paths };

/** The JSON body of every error answer (4xx, 5xx), whatever the route. */
export type DocServiceError = components["schemas"]["Error"];

/** A client of one DocService deployment. */
export type DocServiceClient = Client<paths>;

export interface DocServiceClientOptions extends Omit<ClientOptions, "baseUrl"> {
  /** Where the platform answers, e.g. `https://docs.example.com` (no `/v1`: the paths carry it). */
  baseUrl: string;
  /** An API key from `/v1/auth/verify`, sent as `Authorization: Bearer …` (or an admin token for admin calls). */
  apiKey?: string;
}

/**
 * A typed client: `client.GET("/v1/health")`, `client.POST("/v1/sign", { body })`,
 * `client.GET("/v1/usage", { params: { query } })`. Paths, parameters, bodies and
 * answers are checked by TypeScript against the API the platform serves.
 */
export function createDocServiceClient({ apiKey, ...options }: DocServiceClientOptions): DocServiceClient {
  const client = createClient<paths>({ bodySerializer: serializeBody, ...options });
  if (apiKey) {
    client.use({
      onRequest({ request }) {
        request.headers.set("Authorization", `Bearer ${apiKey}`);
        return request;
      },
    });
  }
  return client;
}

/**
 * A body that holds a file (a Blob or File: `/v1/convert`'s `{ file }`) goes
 * as multipart/form-data, a part per field, the file's name kept; any other
 * body as JSON. So an upload is typed like every other body, with no
 * serializer of the caller's own.
 */
function serializeBody(body: unknown): string | FormData {
  if (typeof body !== "object" || body === null || !Object.values(body).some((value) => value instanceof Blob)) return JSON.stringify(body);
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) form.append(name, value instanceof Blob ? value : String(value));
  return form;
}

/** Whether a value is the platform's error body (for errors caught far from the call that got them). */
export function isDocServiceError(value: unknown): value is DocServiceError {
  const body = value as Partial<DocServiceError> | null;
  return typeof body === "object" && body !== null && typeof body.code === "string" && typeof body.message === "string" && Array.isArray(body.details);
}

/** One line for people: status code, message and the fields at fault. */
export function describeError(error: DocServiceError): string {
  const fields = error.details.map((d) => `${d.field} ${d.issue}`).join("; ");
  return `${error.code}: ${error.message}${fields ? ` (${fields})` : ""}`;
}
