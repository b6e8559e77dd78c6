import { AnnotationServiceService } from "../../gen/ts-proto/docservice/v1/annotation.js";
import type { ConversionApi } from "../conversion/conversion-service.js";
import type { Config } from "../core/config.js";
import { hostedUnary, type HostedService } from "../core/grpc-host.js";
import { AnnotationService } from "./annotation-service.js";

export const ANNOTATION_SERVICE_NAME = "docservice.v1.AnnotationService";

/** AnnotationService from config, beside the conversion service it hands PDF output to (it runs where conversion runs). */
export function provisionAnnotation(config: Config, conversion: ConversionApi & { health(): Promise<void> }): { service: AnnotationService; hosted: HostedService } {
  const service = new AnnotationService({
    conversion,
    limits: { maxDocumentBytes: config.conversionMaxBytes, maxUncompressedBytes: config.conversionMaxUnpackedBytes, maxZipEntries: 10_000 },
    fetch: { timeoutMs: config.fetchTimeoutMs, maxRedirects: 3, allowHosts: config.fetchAllowHosts },
  });
  return { service, hosted: hostedUnary(ANNOTATION_SERVICE_NAME, AnnotationServiceService, service, () => conversion.health()) };
}
