import { z } from "zod";
import { availableCores } from "../core/container-limits.js";
import { type ConfigOf, expandHome, optionalText, positiveInt, variable } from "../core/config.js";

/** Conversion: the LibreOffice pool or Gotenberg, and the limits of a document. docs/configuration.md's reference lists each one (a test checks). */
export const CONVERSION_VARIABLES = {
  conversionBackend: variable("CONVERSION_BACKEND", z.enum(["local", "gotenberg"]), "local", "DOCX → PDF backend: local (warm LibreOffice pool) or gotenberg."),
  gotenbergUrl: variable("GOTENBERG_URL", z.url({ protocol: /^https?$/ }).optional(), undefined, "Gotenberg 8 base URL, e.g. http://gotenberg:3000 (with CONVERSION_BACKEND=gotenberg)."),
  conversionPoolSize: variable(
    "CONVERSION_POOL_SIZE",
    z.union([z.literal("auto").transform(() => availableCores()), z.coerce.number().int().min(1).max(64)]),
    "auto",
    "LibreOffice instances in the local pool; auto is one per core the process may use (a container's CPU limit, rounded up).",
  ),
  conversionTimeoutMs: variable("CONVERSION_TIMEOUT_MS", positiveInt, "60000", "Longest a conversion may take; then its instance is killed and restarted (504)."),
  conversionQueueLimit: variable("CONVERSION_QUEUE_LIMIT", positiveInt, "64", "Conversions that may wait for an instance; more are refused with 503 and Retry-After."),
  conversionMemoryLimitMb: variable("CONVERSION_MEMORY_LIMIT_MB", positiveInt, "1024", "An instance whose LibreOffice grows past this is restarted after its conversion."),
  conversionMaxBytes: variable("CONVERSION_MAX_BYTES", positiveInt, "26214400", "Largest document accepted (413 beyond, before the body is read)."),
  conversionMaxUnpackedBytes: variable("CONVERSION_MAX_UNPACKED_BYTES", positiveInt, "268435456", "Largest total uncompressed size of a DOCX/ODT (ZIP bomb guard)."),
  cacheDir: variable("DOCSERVICE_CACHE", z.string().min(1).transform(expandHome), "~/.cache/docservice", "Where the install scripts put the tools they build (unoserver, test servers)."),
  unoserverBin: variable("UNOSERVER_BIN", optionalText, undefined, "unoserver command driving the local pool; unset means bin/unoserver in DOCSERVICE_CACHE (installed by scripts/install/runtime.sh)."),
  conversionServiceAddress: variable("CONVERSION_SERVICE_ADDR", optionalText, undefined, "host:port of ConversionService for a gateway started alone (unset there: 503) or the signing role alone (required)."),
};

export type ConversionConfig = ConfigOf<typeof CONVERSION_VARIABLES>;
