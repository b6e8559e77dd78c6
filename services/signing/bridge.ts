import { SigningService as SigningServiceDescriptor } from "../../gen/es/docservice/v1/signing_pb.js";
import { SigningServiceService } from "../../gen/ts-proto/docservice/v1/signing.js";
import type { Bridge } from "../gateway/connect-bridge.js";
import type { SigningApi } from "./signing-service.js";

/** SigningService over Connect and gRPC-Web; who may call each method is in services/access/access-rules.ts. */
export function signingServiceBridge(api: SigningApi): Bridge {
  return {
    descriptor: SigningServiceDescriptor,
    definition: SigningServiceService,
    api,
  };
}
