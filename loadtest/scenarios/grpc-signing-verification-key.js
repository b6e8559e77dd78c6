// gRPC docservice.v1.SigningService/GetVerificationKey on GRPC_ADDR.
import { unaryRpc } from "./lib/grpc.js";
import { grpcOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = grpcOptions();

export default unaryRpc("docservice/v1/signing.proto", "docservice.v1.SigningService/GetVerificationKey", () => ({}));
