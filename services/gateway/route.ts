import type { IncomingMessage } from "node:http";
import type { Principal } from "../../gen/ts-proto/docservice/v1/keys.js";
import type { Reply } from "./reply.js";

export interface RequestContext {
  request: IncomingMessage;
  /** The query string's parameters. */
  query: URLSearchParams;
  requestId: string;
  clientIp: string;
  /** For routes with `auth: "bearer"`: the API key presented, and who it belongs to. */
  apiKey?: string;
  principal?: Principal;
}

export interface QueryParameter {
  name: string;
  description: string;
  required: boolean;
}

/** A /v1 route: how it is served and how it is documented in /openapi.json, side by side. */
export interface Route {
  method: "GET" | "POST" | "DELETE";
  path: string;
  operationId: string;
  summary: string;
  /** bearer: an API key; admin: DOCSERVICE_ADMIN_TOKEN. */
  auth: "none" | "bearer" | "admin";
  /** Callable from any origin (CORS without credentials): preflight answered, Access-Control-Allow-Origin on every answer. */
  cors?: boolean;
  query?: QueryParameter[];
  /** The request body, for routes that take one. */
  requestBody?: { contentType: string; schema: object };
  /** JSON Schema of the success body. */
  responseSchema: object;
  /** Media type of the success body; JSON when unset. */
  responseContentType?: string;
  successStatus: number;
  /** Error statuses the route can answer with, and when. */
  errors: Record<number, string>;
  handle(context: RequestContext): Promise<Reply>;
}

/** The value of a query parameter, "" when absent. */
export function queryValue(context: RequestContext, name: string): string {
  return context.query.get(name) ?? "";
}
