/**
 * A grpc-js service definition as ts-proto generates it (`FooServiceService`):
 * one entry per method with its path and (de)serializers.
 */
export type GrpcDefinition = Record<string, GrpcMethod>;

export interface GrpcMethod {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize(value: any): Buffer;
  requestDeserialize(bytes: Buffer): any;
  responseSerialize(value: any): Buffer;
  responseDeserialize(bytes: Buffer): any;
}

type UnaryMethodNames<D> = {
  [M in keyof D]: D[M] extends { requestStream: false; responseStream: false } ? M : never;
}[keyof D];

/**
 * The promise-based shape of a service's unary methods, derived from its
 * generated definition. Implementations and clients of a service both have
 * this type, so a caller cannot tell an in-process service from a remote one.
 */
export type UnaryApi<D> = {
  [M in UnaryMethodNames<D>]: D[M] extends {
    requestDeserialize(bytes: Buffer): infer Req;
    responseDeserialize(bytes: Buffer): infer Res;
  }
    ? (request: Req) => Promise<Res>
    : never;
};

export function unaryMethodNames(definition: GrpcDefinition): string[] {
  return Object.keys(definition).filter(
    (name) => !definition[name].requestStream && !definition[name].responseStream,
  );
}
