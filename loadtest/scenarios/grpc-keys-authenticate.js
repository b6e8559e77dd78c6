// gRPC docservice.v1.KeyService/Authenticate of the API key in API_KEY on
// GRPC_ADDR: what a gateway asks the keys service for each keyed request, as
// the gateway does (the internal token in INTERNAL_TOKEN: Authenticate answers
// only the gateway's identity).
import { unaryRpc } from "./lib/grpc.js";
import { grpcOptions, required } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = grpcOptions();

const API_KEY = required("API_KEY");
const INTERNAL_TOKEN = required("INTERNAL_TOKEN");

export default unaryRpc("docservice/v1/keys.proto", "docservice.v1.KeyService/Authenticate", () => ({ apiKey: API_KEY }), {
  "x-docservice-internal-token": INTERNAL_TOKEN,
});
