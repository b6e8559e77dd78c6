// gRPC docservice.v1.TelemetryService/Collect on GRPC_ADDR: what a gateway
// sends a telemetry replica for each /v1/collect report (EVENTS events).
import { unaryRpc } from "./lib/grpc.js";
import { grpcOptions } from "./lib/options.js";

export { setup, teardown } from "./lib/options.js";
export const options = grpcOptions();

const EVENTS = Number(__ENV.EVENTS || 1);
const RUN = Date.now().toString(36);

export default unaryRpc("docservice/v1/telemetry.proto", "docservice.v1.TelemetryService/Collect", () => {
  const timestamp = new Date().toISOString();
  const events = [];
  for (let e = 0; e < EVENTS; e++) events.push({ timestamp, documentId: `HASH-${RUN}-${__VU}-${__ITER}-${e}`, documentCreatedAt: "" });
  return { licenseKey: __ENV.LICENSE_KEY || "community-and-eval-agplv3", libraryVersion: "0.20.0", browserInfo: { userAgent: "k6" }, events };
});
