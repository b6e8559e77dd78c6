import { ConversionService } from "../../gen/es/docservice/v1/conversion_pb.js";
import { ConversionServiceService } from "../../gen/ts-proto/docservice/v1/conversion.js";
import type { Module } from "../contracts/module.js";
import type { PlatformConfig } from "../core/config.js";
import type { ConversionConfig } from "./config.js";
import { remoteConversion } from "./conversion-grpc.js";
import type { ConversionApi } from "./conversion-service.js";
import { convertRoute } from "./convert-route.js";
import { provisionConversion } from "./provision.js";
import { CALL_DEADLINES_MS } from "../contracts/call-deadlines.js";

/**
 * DOCX (and more) to PDF or DOCX through LibreOffice or Gotenberg. Its one
 * RPC, Convert, streams the document both ways, so it is served over gRPC
 * only (HTTP/2); HTTP clients have POST /v1/convert.
 */
export const conversionModule: Module<ConversionApi, PlatformConfig & ConversionConfig> = {
  name: "conversion",
  roles: ["all", "conversion"],
  service: { descriptor: ConversionService, definition: ConversionServiceService },
  address: {
    variable: "CONVERSION_SERVICE_ADDR",
    of: (config) => config.conversionServiceAddress,
    timeoutMs: CALL_DEADLINES_MS.conversion,
  },
  async start({ config, dataDir, logger }) {
    const conversion = provisionConversion(config, dataDir, logger);
    const local = config.conversionBackend === "local";
    return {
      api: conversion.service,
      hosted: [conversion.hosted],
      health: () => conversion.service.health(),
      // the local pool is this pod's own; Gotenberg is every replica's
      ...(local ? { ready: () => conversion.service.health(), capacity: { convert: config.conversionPoolSize } } : {}),
      close: conversion.close,
    };
  },
  connect: (address, { config, transport }) => remoteConversion(address, conversionModule.address!.timeoutMs(config), transport),
  routes: (conversion, config, messages) => [convertRoute(conversion, config.conversionMaxBytes, messages.route("POST", "/v1/convert"))],
};
