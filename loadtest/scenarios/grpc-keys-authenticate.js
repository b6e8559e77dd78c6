// gRPC docservice.v1.KeyService/Authenticate of the API key in API_KEY on
// GRPC_ADDR: what a gateway asks the keys service for each keyed request, as
// the gateway does: Authenticate answers only the gateway's identity, the
// internal token in INTERNAL_TOKEN (embedded mode) or the gateway's
// certificate (GRPC_TLS_*, lib/grpc.js: a DocService in a cluster).
import { unaryRpc } from "./lib/grpc.js";
import { grpcOptions, required } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = grpcOptions();

const API_KEY = required("API_KEY");

export default unaryRpc(
  "docservice/v1/keys.proto",
  "docservice.v1.KeyService/Authenticate",
  () => ({ apiKey: API_KEY }),
  __ENV.INTERNAL_TOKEN ? { "x-docservice-internal-token": __ENV.INTERNAL_TOKEN } : {},
);
