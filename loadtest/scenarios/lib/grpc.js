import grpc from "k6/net/grpc";
import { check } from "k6";
import { required } from "./options.js";

// Relative to the scenario script (k6 resolves it so); PROTO_DIR (absolute) overrides it.
const PROTO_DIR = __ENV.PROTO_DIR || "../../proto";

/**
 * Mutual TLS when GRPC_TLS_CA_FILE, GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE
 * name PEM files (a DocService's backends in a cluster: the caller presents a
 * certificate of the instance's CA), else plaintext (embedded mode).
 */
function transport() {
  const [ca, cert, key] = ["GRPC_TLS_CA_FILE", "GRPC_TLS_CERT_FILE", "GRPC_TLS_KEY_FILE"].map((name) => __ENV[name]);
  if (!ca && !cert && !key) return { plaintext: true };
  return { tls: { cacerts: [open(required("GRPC_TLS_CA_FILE"))], cert: open(required("GRPC_TLS_CERT_FILE")), key: open(required("GRPC_TLS_KEY_FILE")) } };
}

/**
 * A k6 iteration calling one unary RPC on GRPC_ADDR, the service loaded from
 * its .proto in the init context; `request()` builds each message. Each
 * virtual user keeps one connection.
 */
export function unaryRpc(protoFile, method, request, metadata = {}) {
  const client = new grpc.Client();
  client.load([PROTO_DIR], protoFile);
  const address = required("GRPC_ADDR");
  const security = transport();
  let connected = false;
  return function iteration() {
    if (!connected) {
      client.connect(address, { ...security, timeout: "10s" });
      connected = true;
    }
    const response = client.invoke(method, request(), { metadata });
    check(response, { [`${method} answers OK`]: (r) => r && r.status === grpc.StatusOK });
  };
}
