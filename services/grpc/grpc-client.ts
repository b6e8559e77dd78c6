import { connectivityState, makeGenericClientConstructor, type Client, type Metadata, type ServiceError as GrpcServiceError } from "@grpc/grpc-js";
import type { InternalTransport } from "../access/internal-transport.js";
import { fromGrpcError } from "./grpc-errors.js";
import { GRPC_CHANNEL_OPTIONS, GRPC_CONNECTIONS_PER_BACKEND } from "./grpc-limits.js";
import { unaryMethodNames, type GrpcDefinition, type UnaryApi } from "./unary-api.js";

export interface GrpcClientOptions {
  /** Human-readable name used in errors, e.g. "Key service". */
  serviceName: string;
  /** host:port of the service. */
  address: string;
  /** Deadline of each call. */
  timeoutMs: number;
  /** TLS and the identity this component presents. */
  transport: InternalTransport;
}

export interface RemoteApi<D> {
  api: UnaryApi<D>;
  /** Closes every connection. */
  close(): void;
}

type UnaryCall = (
  request: unknown,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: GrpcServiceError | null, response: unknown) => void,
) => void;

/** The promise-based API of a remote service, over a grpc-js client built from its generated definition. */
export function remoteApi<D extends GrpcDefinition>(definition: D, options: GrpcClientOptions): RemoteApi<D> {
  const Constructor = makeGenericClientConstructor(definition, options.serviceName);
  const clients = leastBusyClients(() => new Constructor(options.address, options.transport.channelCredentials(), GRPC_CHANNEL_OPTIONS));
  const api: Record<string, (request: unknown) => Promise<unknown>> = {};
  for (const name of unaryMethodNames(definition)) {
    api[name] = (request) =>
      clients.call(
        (client) =>
          new Promise((resolve, reject) => {
            const deadline = new Date(Date.now() + options.timeoutMs);
            (client as unknown as Record<string, UnaryCall>)[name]!.call(client, request, options.transport.callMetadata(), { deadline }, (error, response) =>
              error ? reject(fromGrpcError(error, options.serviceName)) : resolve(response),
            );
          }),
      );
  }
  return { api: api as UnaryApi<D>, close: clients.close };
}

/**
 * {@link GRPC_CONNECTIONS_PER_BACKEND} clients of one backend, each with a
 * connection of its own. A call takes, of those whose connection is up, the
 * one with the fewest calls in flight (the next in turn among equals).
 * Behind a Service each connection reaches one pod, so a pod with a queue
 * (one that was alone in a surge, or slow) gets new calls only once the
 * others are as busy, rather than its share in turn while pods added beside
 * it idle. A connection being made may hang until the call's deadline
 * (kube-proxy can still send it to a pod that has just gone), so with one up
 * no call waits on the others, which are asked to connect; with none up, the
 * call takes the next in turn.
 */
export function leastBusyClients<C extends Client>(make: () => C): { call<T>(use: (client: C) => Promise<T>): Promise<T>; close(): void } {
  const clients = Array.from({ length: GRPC_CONNECTIONS_PER_BACKEND }, make);
  const inFlight = clients.map(() => 0);
  let turn = 0;
  const pick = () => {
    const first = turn++ % clients.length;
    let chosen = -1;
    for (let offset = 0; offset < clients.length; offset++) {
      const index = (first + offset) % clients.length;
      const up = clients[index]!.getChannel().getConnectivityState(true) === connectivityState.READY;
      if (up && (chosen < 0 || inFlight[index]! < inFlight[chosen]!)) chosen = index;
    }
    return chosen < 0 ? first : chosen;
  };
  return {
    call: async (use) => {
      const index = pick();
      inFlight[index]!++;
      try {
        return await use(clients[index]!);
      } finally {
        inFlight[index]!--;
      }
    },
    close: () => clients.forEach((client) => client.close()),
  };
}
