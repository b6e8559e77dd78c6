import { SigningService } from "../../gen/es/docservice/v1/signing_pb.js";
import { SigningServiceService } from "../../gen/ts-proto/docservice/v1/signing.js";
import type { Module } from "../contracts/module.js";
import type { ConversionConfig } from "../conversion/config.js";
import type { PlatformConfig } from "../core/config.js";
import type { SigningConfig } from "./config.js";
import { conversionModule } from "../conversion/module.js";
import { provisionSigning } from "./provision.js";
import { signRoutes } from "./sign-routes.js";
import type { SigningApi } from "./signing-service.js";
import { CALL_DEADLINES_MS } from "../contracts/call-deadlines.js";

/** PAdES signatures with an audit-trail page, time-stamps and verification; DOCX is converted by the conversion module first. */
export const signingModule: Module<SigningApi, PlatformConfig & SigningConfig & ConversionConfig> = {
  name: "signing",
  roles: ["all", "signing"],
  service: { descriptor: SigningService, definition: SigningServiceService },
  address: {
    variable: "SIGNING_SERVICE_ADDR",
    of: (config) => config.signingServiceAddress,
    timeoutMs: CALL_DEADLINES_MS.signing,
  },
  async start(context) {
    const { config, dataDir, logger } = context;
    const signing = await provisionSigning(config, dataDir, context.use(conversionModule), logger);
    return { api: signing.service, health: () => signing.service.health(), capacity: { sign: config.signingWorkers }, close: signing.close };
  },
  routes: (signing, config, messages) =>
    signRoutes(signing, { maxDocumentBytes: config.signingMaxBytes, metadataMaxBytes: config.signingMetadataMaxBytes, maxBodyBytes: messages.route("POST", "/v1/sign") }),
};
