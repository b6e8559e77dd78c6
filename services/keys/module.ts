import { KeyService } from "../../gen/es/docservice/v1/keys_pb.js";
import { KeyServiceService } from "../../gen/ts-proto/docservice/v1/keys.js";
import type { Module } from "../contracts/module.js";
import type { PlatformConfig } from "../core/config.js";
import type { KeysConfig } from "./config.js";
import type { KeyServiceApi } from "./key-service.js";
import { keyRoutes } from "./key-routes.js";
import { provisionKeyService } from "./provision.js";
import { CALL_DEADLINES_MS } from "../contracts/call-deadlines.js";

/** API keys by e-mail: register, verify a code, the key once; the gateway and every backend authenticate API keys here. */
export const keysModule: Module<KeyServiceApi, PlatformConfig & KeysConfig> = {
  name: "keys",
  roles: ["all", "keys"],
  service: { descriptor: KeyService, definition: KeyServiceService },
  address: { variable: "KEYS_SERVICE_ADDR", of: (config) => config.keysServiceAddress, timeoutMs: CALL_DEADLINES_MS.keys },
  async start({ config, dataDir, logger }) {
    const keys = provisionKeyService(config, dataDir, logger);
    return { api: keys.service, health: () => keys.service.health(), close: keys.close };
  },
  routes: (keys) => keyRoutes(keys),
};
