import grpc from "k6/net/grpc";
import { check } from "k6";
import { required } from "./options.js";

// Relative to the scenario script (k6 resolves it so); PROTO_DIR (absolute) overrides it.
const PROTO_DIR = __ENV.PROTO_DIR || "../../proto";

/**
 * A k6 iteration calling one unary RPC on GRPC_ADDR (plaintext), the service
 * loaded from its .proto in the init context; `request()` builds each message.
 * Each virtual user keeps one connection.
 */
export function unaryRpc(protoFile, method, request, metadata = {}) {
  const client = new grpc.Client();
  client.load([PROTO_DIR], protoFile);
  const address = required("GRPC_ADDR");
  let connected = false;
  return function iteration() {
    if (!connected) {
      client.connect(address, { plaintext: true, timeout: "10s" });
      connected = true;
    }
    const response = client.invoke(method, request(), { metadata });
    check(response, { [`${method} answers OK`]: (r) => r && r.status === grpc.StatusOK });
  };
}
