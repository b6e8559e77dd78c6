import { TelemetryService as TelemetryServiceDescriptor } from "../../gen/es/docservice/v1/telemetry_pb.js";
import { TelemetryServiceService } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import type { Bridge } from "../gateway/connect-bridge.js";
import type { TelemetryApi } from "./telemetry-service.js";

/** TelemetryService over Connect and gRPC-Web: Collect for anyone (the license key is in the message), the rest with the admin token. */
export function telemetryServiceBridge(api: TelemetryApi): Bridge {
  return {
    descriptor: TelemetryServiceDescriptor,
    definition: TelemetryServiceService,
    api,
    access: { collect: "public", getUsage: "admin", addLicenseKey: "admin", removeLicenseKey: "admin", listLicenseKeys: "admin" },
  };
}
