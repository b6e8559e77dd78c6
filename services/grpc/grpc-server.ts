import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { toGrpcStatus } from "./grpc-errors.js";
import { unaryMethodNames, type GrpcDefinition, type UnaryApi } from "./unary-api.js";

/** grpc-js handlers for every unary method of `definition`, served by the promise-based `api`. */
export function unaryHandlers<D extends GrpcDefinition>(definition: D, api: UnaryApi<D>): UntypedServiceImplementation {
  const methods = api as Record<string, (request: unknown) => Promise<unknown>>;
  const handlers: UntypedServiceImplementation = {};
  for (const name of unaryMethodNames(definition)) {
    handlers[name] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      methods[name](call.request).then(
        (response) => callback(null, response),
        (error: unknown) => callback(toGrpcStatus(error)),
      );
    };
  }
  return handlers;
}
