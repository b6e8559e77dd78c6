import type { ConversionApi } from "../conversion/conversion-service.js";
import type { ConversionConfig } from "../conversion/config.js";
import type { PlatformConfig } from "../core/config.js";
import { AnnotationService } from "./annotation-service.js";

/** AnnotationService from config, beside the conversion service it hands PDF output to (it runs where conversion runs). */
export function provisionAnnotation(config: PlatformConfig & ConversionConfig, conversion: ConversionApi): AnnotationService {
  return new AnnotationService({
    conversion,
    limits: { maxDocumentBytes: config.conversionMaxBytes, maxUncompressedBytes: config.conversionMaxUnpackedBytes, maxZipEntries: 10_000 },
    fetch: { timeoutMs: config.fetchTimeoutMs, maxRedirects: 3, allowHosts: config.fetchAllowHosts },
  });
}
