import { CONVERSION_VARIABLES } from "./conversion/config.js";
import { loadVariables, PLATFORM_VARIABLES, type ConfigOf } from "./core/config.js";
import { KEYS_VARIABLES } from "./keys/config.js";
import { SIGNING_VARIABLES } from "./signing/config.js";
import { TELEMETRY_VARIABLES } from "./telemetry/config.js";

/** Every setting of the platform: what every process reads, then each module's own. README.md's configuration table lists each one (a test checks). */
export const VARIABLES = { ...PLATFORM_VARIABLES, ...KEYS_VARIABLES, ...CONVERSION_VARIABLES, ...SIGNING_VARIABLES, ...TELEMETRY_VARIABLES };

export type Config = ConfigOf<typeof VARIABLES>;

/** Every variable parsed and validated in one pass, at start-up: a ConfigError names each bad one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadVariables(VARIABLES, env);
}
