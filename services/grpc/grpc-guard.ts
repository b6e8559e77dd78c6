import type { Metadata, ServerUnaryCall, sendUnaryData, StatusObject, UntypedHandleCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { contextFrom, isTracing, mayRecord, SpanKind, tracer } from "../core/tracing.js";
import { toGrpcStatus } from "./grpc-errors.js";
import { RefusedMessage } from "./grpc-limits.js";
import type { GrpcDefinition } from "./unary-api.js";
import { rpcAccess } from "../access/access-rules.js";
import { admit, type Caller, type CredentialCheck } from "../access/admit.js";
import type { InternalTransport } from "../access/internal-transport.js";

type AnyCall = ServerUnaryCall<unknown, unknown> & { request?: Record<string, unknown>; metadata: Metadata };

/**
 * Wraps every handler of a gRPC service so that it first admits its caller by
 * services/access/access-rules.ts, whatever the transport. A caller other than
 * the gateway cannot speak for someone else: the message's callerKeyId is the
 * key it presented, and its clientIp (per-address rate limits) its own address.
 * A message that was refused undecoded (services/grpc/grpc-limits.ts) is
 * answered with its error once the caller is admitted.
 */
export function guardService(
  serviceName: string,
  definition: GrpcDefinition,
  handlers: UntypedServiceImplementation,
  transport: InternalTransport,
  credentials: CredentialCheck,
): UntypedServiceImplementation {
  const guarded: UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(handlers)) {
    const method = definition[name].path.split("/").pop()!;
    const access = rpcAccess(serviceName, method);
    const serve = (call: AnyCall, callback?: sendUnaryData<unknown>) => {
      const authorization = call.metadata.get("authorization")[0];
      admit(access, { authorization: typeof authorization === "string" ? authorization : undefined, fromGateway: transport.fromGateway(call) }, credentials).then(
        (caller) => {
          if (call.request instanceof RefusedMessage) return void callback?.(toGrpcStatus(call.request.error));
          if (caller.kind !== "gateway" && call.request) speakOnlyForYourself(call.request, caller, call.getPeer());
          (handler as (call: AnyCall, callback?: sendUnaryData<unknown>) => void)(call, callback);
        },
        (error: unknown) => (callback ? callback(toGrpcStatus(error)) : call.emit("error", toGrpcStatus(error))),
      );
    };
    guarded[name] = ((call: AnyCall, callback?: sendUnaryData<unknown>) => {
      if (isTracing()) return tracedCall(`${serviceName}/${method}`, call, callback, (answer) => serve(call, answer));
      serve(call, callback);
    }) as UntypedHandleCall;
  }
  return guarded;
}

/**
 * Serves a call inside a server span, a child of the caller's (its
 * traceparent in the metadata): the span ends with the unary answer, or when
 * a stream ends or fails; a failure carries its error code.
 */
function tracedCall(name: string, call: AnyCall, callback: sendUnaryData<unknown> | undefined, serve: (callback?: sendUnaryData<unknown>) => void): void {
  const parent = contextFrom(call.metadata.getMap() as Record<string, string>);
  if (!mayRecord(parent)) return void context.with(parent, () => serve(callback));
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes: { "rpc.system": "grpc", "rpc.method": name } }, parent);
  const end = (error?: Partial<StatusObject> | null) => {
    if (!span.isRecording()) return;
    span.setAttribute("rpc.grpc.status_code", error?.code ?? 0);
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: String(error.metadata?.get("docservice-error-code")[0] ?? error.details ?? "") });
    span.end();
  };
  if (!callback) {
    call.once("finish", () => end());
    call.once("error", (error: Partial<StatusObject>) => end(error));
  }
  const answer: sendUnaryData<unknown> | undefined = callback && ((error, value, trailer, flags) => (end(error), callback(error, value, trailer, flags)));
  context.with(trace.setSpan(parent, span), () => serve(answer));
}

function speakOnlyForYourself(request: Record<string, unknown>, caller: Caller, peer: string): void {
  if ("callerKeyId" in request) request.callerKeyId = caller.kind === "apiKey" ? caller.principal.keyId : "";
  if ("clientIp" in request) request.clientIp = addressOf(peer);
}

/** "127.0.0.1:5000" → "127.0.0.1", "[::1]:5000" → "::1". */
function addressOf(peer: string): string {
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(peer);
  if (bracketed) return bracketed[1];
  return peer.replace(/:\d+$/, "");
}
