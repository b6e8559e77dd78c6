import { AsyncLocalStorage } from "node:async_hooks";
import type { ServerResponse } from "node:http";
import { ServiceError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { errorReply, sendReply } from "../contracts/reply.js";

interface RequestScope {
  requestId: string;
  response: ServerResponse;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs the serving of one request in its own scope, so an error nobody caught can still be pinned on it. */
export function inRequestScope<T>(scope: RequestScope, serve: () => T): T {
  return scopes.run(scope, serve);
}

/**
 * The last line: an error no code caught (an unheard stream 'error', a
 * rejection nobody awaited) inside a request fails that request with a 500 and
 * the JSON body, and the process keeps serving. An error outside any request
 * leaves the process in a state nobody knows, so it still ends it.
 */
export function failRequestsOnUncaughtErrors(logger: Logger): void {
  const onError = (error: unknown) => {
    const scope = scopes.getStore();
    if (!scope) {
      logger.fatal({ err: error }, "uncaught error outside any request: exiting");
      process.exit(1);
    }
    logger.error({ err: error, requestId: scope.requestId }, "uncaught error in a request: answered 500, still serving");
    const { response, requestId } = scope;
    if (!response.headersSent) sendReply(response, errorReply(new ServiceError("INTERNAL", "The request failed unexpectedly."), requestId), requestId);
    else response.destroy();
  };
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
}
