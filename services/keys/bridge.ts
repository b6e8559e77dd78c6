import { KeyService as KeyServiceDescriptor } from "../../gen/es/docservice/v1/keys_pb.js";
import { KeyServiceService } from "../../gen/ts-proto/docservice/v1/keys.js";
import type { Bridge } from "../gateway/connect-bridge.js";
import type { KeyServiceApi } from "./key-service.js";

export const KEY_SERVICE_NAME = "docservice.v1.KeyService";

/** KeyService over Connect and gRPC-Web; who may call each method is in services/access/access-rules.ts. */
export function keyServiceBridge(api: KeyServiceApi): Bridge {
  return {
    descriptor: KeyServiceDescriptor,
    definition: KeyServiceService,
    api,
  };
}
