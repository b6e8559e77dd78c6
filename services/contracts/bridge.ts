import type { DescService } from "@bufbuild/protobuf";
import type { GrpcDefinition } from "../grpc/unary-api.js";

/** One protobuf service as both generators describe it: protobuf-es for Connect and gRPC-Web, ts-proto for grpc-js. */
export interface ServiceBinding {
  descriptor: DescService;
  definition: GrpcDefinition;
}

/** One service exposed over Connect and gRPC-Web: its binding, and the API that serves it (in process or remote). */
export interface Bridge extends ServiceBinding {
  api: object;
}
