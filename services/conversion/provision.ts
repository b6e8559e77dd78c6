import { join } from "node:path";
import { ConversionService as ConversionServiceDescriptor } from "../../gen/es/docservice/v1/conversion_pb.js";
import { ConversionServiceService } from "../../gen/ts-proto/docservice/v1/conversion.js";
import type { ConversionConfig } from "./config.js";
import type { DataDir } from "../core/data-dir.js";
import type { HostedService } from "../grpc/grpc-host.js";
import type { Logger } from "../core/logger.js";
import { conversionHandlers } from "./conversion-grpc.js";
import { exportConverterLoad } from "./conversion-metrics.js";
import { ConversionService } from "./conversion-service.js";
import type { Converter } from "./converter.js";
import { GotenbergConverter } from "./gotenberg-converter.js";
import { LibreOfficePool } from "./libreoffice-pool.js";

export interface ProvisionedConversion {
  service: ConversionService;
  hosted: HostedService;
  close(): Promise<void>;
}

/** Builds ConversionService from config: the local LibreOffice pool (started in the background) or Gotenberg. */
export function provisionConversion(config: ConversionConfig, dataDir: DataDir, logger: Logger): ProvisionedConversion {
  const log = logger.child({ service: "conversion" });
  let converter: Converter;
  if (config.conversionBackend === "gotenberg") {
    if (!config.gotenbergUrl) throw new Error("GOTENBERG_URL: required with CONVERSION_BACKEND=gotenberg");
    converter = new GotenbergConverter({ url: config.gotenbergUrl, timeoutMs: config.conversionTimeoutMs });
  } else {
    const pool = new LibreOfficePool({
      size: config.conversionPoolSize,
      unoserverBin: config.unoserverBin ?? join(config.cacheDir, "bin", "unoserver"),
      directory: dataDir.path("conversion"),
      timeoutMs: config.conversionTimeoutMs,
      queueLimit: config.conversionQueueLimit,
      memoryLimitBytes: config.conversionMemoryLimitMb * 1024 * 1024,
      startTimeoutMs: 60_000,
      logger: log,
    });
    void pool.start();
    converter = pool;
  }
  exportConverterLoad(converter, config.conversionBackend === "gotenberg" ? undefined : config.conversionPoolSize);
  log.info({ backend: config.conversionBackend }, "conversion service ready");
  const service = new ConversionService(converter, {
    maxDocumentBytes: config.conversionMaxBytes,
    maxUncompressedBytes: config.conversionMaxUnpackedBytes,
    maxZipEntries: 10_000,
  });
  return {
    service,
    hosted: {
      name: ConversionServiceDescriptor.typeName,
      definition: ConversionServiceService,
      handlers: conversionHandlers(service, config.conversionMaxBytes),
      health: () => service.health(),
    },
    close: () => converter.close(),
  };
}
