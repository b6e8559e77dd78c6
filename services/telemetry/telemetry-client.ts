import { TelemetryServiceService, type CollectRequest } from "../../gen/ts-proto/docservice/v1/telemetry.js";
import type { InternalTransport } from "../access/internal-transport.js";
import { remoteApi } from "../grpc/grpc-client.js";
import type { TelemetryModuleApi } from "./telemetry-service.js";
import type { UsageReport } from "./usage-report.js";

/**
 * The telemetry module in another process. A report the gateway has checked
 * travels as the CollectRequest of the wire, and the service checks it again
 * at its own edge, as it does every caller's: Collect is public over gRPC and
 * Connect, so a message cannot vouch for having been checked.
 */
export function remoteTelemetry(address: string, timeoutMs: number, transport: InternalTransport): TelemetryModuleApi {
  const { api } = remoteApi(TelemetryServiceService, { serviceName: "The telemetry service", address, timeoutMs, transport });
  return {
    ...api,
    // what the gateway's edge left out of the metadata was left out before the report travelled
    accept: async (report) => {
      const response = await api.collect(collectRequestOf(report));
      return { ...response, metadataDropped: [...report.metadataDropped, ...response.metadataDropped] };
    },
  };
}

/** A checked report as the wire carries it. */
export function collectRequestOf(report: UsageReport): CollectRequest {
  return {
    licenseKey: report.licenseKey,
    libraryVersion: report.libraryVersion,
    browserInfo: { userAgent: "", currentUrl: "", hostname: report.hostname, screenSize: undefined },
    metadata: report.metadata,
    events: report.events.map((event) => ({ timestamp: new Date(event.openedAt), documentId: event.documentId, documentCreatedAt: event.documentCreatedAt ?? "" })),
  };
}
