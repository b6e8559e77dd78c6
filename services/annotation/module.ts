import { AnnotationService } from "../../gen/es/docservice/v1/annotation_pb.js";
import { AnnotationServiceService } from "../../gen/ts-proto/docservice/v1/annotation.js";
import type { Module } from "../contracts/module.js";
import type { ConversionConfig } from "../conversion/config.js";
import type { PlatformConfig } from "../core/config.js";
import { conversionModule } from "../conversion/module.js";
import { annotateRoute } from "./annotate-route.js";
import type { AnnotationApi } from "./annotation-service.js";
import { provisionAnnotation } from "./provision.js";
import { CALL_DEADLINES_MS } from "../contracts/call-deadlines.js";

/** Fills DOCX templates; runs beside the conversion module, which turns its output into PDF, and is found at its address. */
export const annotationModule: Module<AnnotationApi, PlatformConfig & ConversionConfig> = {
  name: "annotation",
  roles: ["all", "conversion"],
  service: { descriptor: AnnotationService, definition: AnnotationServiceService },
  address: {
    variable: "CONVERSION_SERVICE_ADDR",
    of: (config) => config.conversionServiceAddress,
    timeoutMs: CALL_DEADLINES_MS.annotation,
  },
  async start(context) {
    const service = provisionAnnotation(context.config, context.use(conversionModule));
    return { api: service, health: context.healthOf(conversionModule), close: async () => {} };
  },
  routes: (annotation, _config, messages) => [annotateRoute(annotation, messages.route("POST", "/v1/annotate"))],
};
