import { TelemetryService as TelemetryServiceDescriptor } from "../../gen/es/docservice/v1/telemetry_pb.js";
import { TelemetryServiceService } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import type { Bridge } from "../gateway/connect-bridge.js";
import type { TelemetryApi } from "./telemetry-service.js";

/** TelemetryService over Connect and gRPC-Web; who may call each method is in services/access/access-rules.ts. */
export function telemetryServiceBridge(api: TelemetryApi): Bridge {
  return {
    descriptor: TelemetryServiceDescriptor,
    definition: TelemetryServiceService,
    api,
  };
}
