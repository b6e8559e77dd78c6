import { CONVERSION_VARIABLES } from "./conversion/config.js";
import { loadVariables, PLATFORM_VARIABLES, type ConfigOf, type Variable } from "./core/config.js";
import { KEYS_VARIABLES } from "./keys/config.js";
import { SIGNING_VARIABLES } from "./signing/config.js";
import { TELEMETRY_VARIABLES } from "./telemetry/config.js";

/** The settings by who reads them: every process, then each module (declared beside it). */
export const CONFIGURATION_SECTIONS: readonly { title: string; variables: Record<string, Variable<unknown>> }[] = [
  { title: "Every process", variables: PLATFORM_VARIABLES },
  { title: "Keys module", variables: KEYS_VARIABLES },
  { title: "Conversion and annotation modules", variables: CONVERSION_VARIABLES },
  { title: "Signing module", variables: SIGNING_VARIABLES },
  { title: "Telemetry module and aggregator", variables: TELEMETRY_VARIABLES },
];

/** Every setting of the platform. docs/configuration.md's reference is generated from them (scripts/write-config-reference.ts). */
export const VARIABLES = { ...PLATFORM_VARIABLES, ...KEYS_VARIABLES, ...CONVERSION_VARIABLES, ...SIGNING_VARIABLES, ...TELEMETRY_VARIABLES };

export type Config = ConfigOf<typeof VARIABLES>;

/** Every variable parsed and validated in one pass, at start-up: a ConfigError names each bad one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadVariables(VARIABLES, env);
}
