import { STATUS_CODES } from "node:http";
import { VERSION } from "../core/version.js";
import type { Route } from "./route.js";

const errorSchema = {
  type: "object",
  required: ["code", "error", "message", "requestId"],
  properties: {
    code: { type: "string", description: "Stable machine-readable code, e.g. VALIDATION_ERROR." },
    error: { type: "string", description: "HTTP status text." },
    message: { type: "string", description: "What went wrong, for people." },
    requestId: { type: "string", description: "Also in the X-Request-Id header; quote it in support requests." },
    details: {
      type: "array",
      items: { type: "object", required: ["field", "issue"], properties: { field: { type: "string" }, issue: { type: "string" } } },
    },
  },
};

const json = (schema: object) => ({ "application/json": { schema } });

/** OpenAPI 3.1 of the /v1 routes, built from the same route table that serves them. */
export function openApiDocument(routes: Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const responses: Record<string, object> = {
      [route.successStatus]: {
        description: STATUS_CODES[route.successStatus],
        content: { [route.responseContentType ?? "application/json"]: { schema: route.responseSchema } },
      },
    };
    for (const [status, description] of Object.entries(route.errors)) {
      responses[status] = { description, content: json({ $ref: "#/components/schemas/Error" }) };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      security: route.auth === "bearer" ? [{ apiKey: [] }] : route.auth === "admin" ? [{ adminToken: [] }] : [],
      parameters: (route.query ?? []).map((p) => ({
        name: p.name,
        in: "query",
        required: p.required,
        description: p.description,
        schema: { type: "string" },
      })),
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
