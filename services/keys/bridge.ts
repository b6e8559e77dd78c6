import { KeyService as KeyServiceDescriptor } from "../../gen/es/docservice/v1/keys_pb.js";
import { KeyServiceService } from "../../gen/ts-proto/docservice/v1/keys.js";
import type { Bridge } from "../gateway/connect-bridge.js";
import type { KeyServiceApi } from "./key-service.js";

export const KEY_SERVICE_NAME = "docservice.v1.KeyService";

/**
 * KeyService over Connect and gRPC-Web. GetKeyInfo authenticates by the key in
 * its message; Authenticate (an oracle for internal callers) and Revoke by
 * address need the admin token. Self-service revocation is DELETE /v1/auth/key.
 */
export function keyServiceBridge(api: KeyServiceApi): Bridge {
  return {
    descriptor: KeyServiceDescriptor,
    definition: KeyServiceService,
    api,
    access: { register: "public", verify: "public", getKeyInfo: "public", authenticate: "admin", revoke: "admin" },
  };
}
