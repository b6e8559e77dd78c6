/** The settings a call's deadline is made of: the platform's (core/config.ts) and the modules' own. */
interface DeadlineSettings {
  backendTimeoutMs: number;
  conversionTimeoutMs: number;
  fetchTimeoutMs: number;
  signingTsaTimeoutMs: number;
}

type Settings<K extends keyof DeadlineSettings> = Pick<DeadlineSettings, K>;

/**
 * The deadline of one call to each module's service, whatever the call waits
 * for on its side: what its callers wait at most, and so the longest request
 * a process serving that module holds when it is asked to stop. Kept apart
 * from the modules so that the operator sizes a pod's shutdown from the same
 * numbers without loading the modules themselves.
 */
export const CALL_DEADLINES_MS = {
  keys: (config: Settings<"backendTimeoutMs">) => config.backendTimeoutMs,
  conversion: (config: Settings<"conversionTimeoutMs" | "backendTimeoutMs">) => config.conversionTimeoutMs + config.backendTimeoutMs,
  // a template may name images by URL, and its output may be converted
  annotation: (config: Settings<"conversionTimeoutMs" | "fetchTimeoutMs" | "backendTimeoutMs">) => config.conversionTimeoutMs + config.fetchTimeoutMs + config.backendTimeoutMs,
  // a sign may wait for a DOCX conversion and a time-stamp as well as the signature
  signing: (config: Settings<"conversionTimeoutMs" | "signingTsaTimeoutMs" | "backendTimeoutMs">) => config.conversionTimeoutMs + config.signingTsaTimeoutMs + config.backendTimeoutMs,
  telemetry: (config: Settings<"backendTimeoutMs">) => config.backendTimeoutMs,
} as const;
