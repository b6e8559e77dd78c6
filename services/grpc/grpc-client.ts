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
  const clients = clientsInTurn(() => new Constructor(options.address, options.transport.channelCredentials(), GRPC_CHANNEL_OPTIONS));
  const api: Record<string, (request: unknown) => Promise<unknown>> = {};
  for (const name of unaryMethodNames(definition)) {
    api[name] = (request) =>
      new Promise((resolve, reject) => {
        const client = clients.next();
        const deadline = new Date(Date.now() + options.timeoutMs);
        (client as unknown as Record<string, UnaryCall>)[name]!.call(client, request, options.transport.callMetadata(), { deadline }, (error, response) =>
          error ? reject(fromGrpcError(error, options.serviceName)) : resolve(response),
        );
      });
  }
  return { api: api as UnaryApi<D>, close: clients.close };
}

/**
 * {@link GRPC_CONNECTIONS_PER_BACKEND} clients of one backend, each with a
 * connection of its own, taken in turn: the next whose connection is up, when
 * one is. A connection being made may hang until the call's deadline (behind a
 * Service, kube-proxy can still send it to a pod that has just gone), and
 * calls given to it would wait with it; those passed over are asked to connect.
 */
export function clientsInTurn<C extends Client>(make: () => C): { next(): C; close(): void } {
  const clients = Array.from({ length: GRPC_CONNECTIONS_PER_BACKEND }, make);
  let turn = 0;
  return {
    next: () => {
      const first = turn++;
      for (let offset = 0; offset < clients.length; offset++) {
        const client = clients[(first + offset) % clients.length]!;
        if (client.getChannel().getConnectivityState(true) === connectivityState.READY) {
          turn = first + offset + 1;
          return client;
        }
      }
      return clients[first % clients.length]!;
    },
    close: () => clients.forEach((client) => client.close()),
  };
}
