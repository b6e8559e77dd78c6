import { STATUS_CODES } from "node:http";
import { VERSION } from "../core/version.js";
import { routeAccess, type Access } from "../access/access-rules.js";
import type { Parameter, Route } from "../contracts/route.js";

/** How each access rule is documented; no /v1 route is gateway-only. */
const SECURITY: Record<Access, object[]> = { public: [], apiKey: [{ apiKey: [] }], admin: [{ adminToken: [] }], gateway: [] };

/** The statuses the access check itself answers with, so every route that has one documents them (a route's own words win). */
const ACCESS_ERRORS: Record<Access, Record<number, string>> = {
  public: {},
  apiKey: { 401: "The API key is missing, malformed or revoked." },
  admin: { 401: "The admin token is missing or wrong.", 403: "Admin calls are disabled (DOCSERVICE_ADMIN_TOKEN is not set)." },
  gateway: {},
};

const errorSchema = {
  type: "object",
  required: ["code", "error", "message", "requestId", "details"],
  properties: {
    code: { type: "string", description: "Stable machine-readable code, e.g. VALIDATION_ERROR." },
    error: { type: "string", description: "HTTP status text." },
    message: { type: "string", description: "What went wrong, for people." },
    requestId: { type: "string", description: "Also in the X-Request-Id header; quote it in support requests." },
    details: {
      type: "array",
      description: "One {field, issue} per problem with the request; empty when the error is not about a field.",
      items: { type: "object", required: ["field", "issue"], properties: { field: { type: "string" }, issue: { type: "string" } } },
    },
  },
};

const json = (schema: object) => ({ "application/json": { schema } });

const parameters = (where: "query" | "header", list: Parameter[] = []) =>
  list.map((p) => ({ name: p.name, in: where, required: p.required, description: p.description, schema: p.schema ?? { type: "string" } }));

/** OpenAPI 3.1 of the /v1 routes, built from the same route table that serves them. */
export function openApiDocument(routes: Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const responses: Record<string, object> = {
      [route.successStatus]: {
        description: STATUS_CODES[route.successStatus],
        content: Object.fromEntries((route.responseContentTypes ?? ["application/json"]).map((type) => [type, { schema: route.responseSchema }])),
      },
    };
    const access = routeAccess(route);
    for (const [status, description] of Object.entries({ ...ACCESS_ERRORS[access], ...route.errors })) {
      const schema = route.successBodyOn?.includes(Number(status)) ? route.responseSchema : { $ref: "#/components/schemas/Error" };
      responses[status] = { description, content: json(schema) };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      security: SECURITY[access],
      parameters: [...parameters("query", route.query), ...parameters("header", route.headers)],
      ...(route.requestBody ? { requestBody: { required: true, content: { [route.requestBody.contentType]: { schema: route.requestBody.schema } } } } : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "DocService", version: VERSION, description: "Signing, API keys, conversion and usage telemetry behind one /v1 API." },
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "An API key from /v1/auth/verify." },
        adminToken: { type: "http", scheme: "bearer", description: "The DOCSERVICE_ADMIN_TOKEN of the deployment." },
      },
    },
  };
}
