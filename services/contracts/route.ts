import type { IncomingMessage } from "node:http";
import type { Principal } from "../../gen/ts-proto/docservice/v1/keys.js";
import { validationError, type FieldIssue } from "../core/errors.js";
import type { Reply } from "./reply.js";

export interface RequestContext {
  request: IncomingMessage;
  /** The query string's parameters. */
  query: URLSearchParams;
  requestId: string;
  clientIp: string;
  /** For routes that need an API key (services/access/access-rules.ts): the key presented, and who it belongs to. */
  apiKey?: string;
  principal?: Principal;
}

/** A query parameter or request header, as /openapi.json documents it. */
export interface Parameter {
  name: string;
  description: string;
  required: boolean;
  /** JSON Schema of the value in /openapi.json (what the route accepts); a plain string when unset. */
  schema?: object;
}

/** A /v1 route: how it is served and how it is documented in /openapi.json, side by side. */
export interface Route {
  method: "GET" | "POST" | "DELETE";
  path: string;
  operationId: string;
  summary: string;
  /** Callable from any origin (CORS without credentials): preflight answered, Access-Control-Allow-Origin on every answer. */
  cors?: boolean;
  query?: Parameter[];
  /** Request headers the route reads (besides Authorization and Content-Type). */
  headers?: Parameter[];
  /** The request body, for routes that take one. */
  requestBody?: { contentType: string; schema: object };
  /** JSON Schema of the success body. */
  responseSchema: object;
  /** Media types of the success body (which one depends on the request); JSON when unset. */
  responseContentTypes?: string[];
  successStatus: number;
  /** Error statuses the route can answer with, and when. */
  errors: Record<number, string>;
  /** Statuses among `errors` answered with the success body (its schema) instead of the JSON error body, e.g. /v1/health's 503. */
  successBodyOn?: number[];
  handle(context: RequestContext): Promise<Reply>;
}

/**
 * The values of single-valued query parameters, "" for each one absent. Every
 * route reads its query parameters here or through {@link queryValue}: a
 * parameter given more than once (`?email=a@x&email=b@y`) is a
 * VALIDATION_ERROR naming every such parameter, never a silent pick.
 */
export function queryValues<Name extends string>(context: RequestContext, names: readonly Name[]): Record<Name, string> {
  const values = {} as Record<Name, string>;
  const issues: FieldIssue[] = [];
  for (const name of names) {
    const given = context.query.getAll(name);
    if (given.length > 1) issues.push({ field: name, issue: `must be given once, not ${given.length} times` });
    values[name] = given[0] ?? "";
  }
  if (issues.length > 0) throw validationError(issues);
  return values;
}

/** The value of one single-valued query parameter, "" when absent (see {@link queryValues}). */
export function queryValue(context: RequestContext, name: string): string {
  return queryValues(context, [name])[name];
}
