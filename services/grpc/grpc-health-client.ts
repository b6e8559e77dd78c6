import { makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import type { InternalTransport } from "../access/internal-transport.js";
import type { HealthCheck } from "../core/health.js";

interface HealthClient {
  check(
    request: { service: string },
    options: { deadline: Date },
    callback: (error: ServiceError | null, response?: { status: string }) => void,
  ): void;
}

/** A HealthCheck asking a remote gRPC server, through grpc.health.v1, whether `serviceName` is serving. */
export function remoteHealthCheck(address: string, serviceName: string, timeoutMs: number, transport: InternalTransport): HealthCheck {
  const Client = makeGenericClientConstructor(healthService, "Health");
  const client = new Client(address, transport.channelCredentials()) as unknown as HealthClient;
  return () =>
    new Promise((resolve, reject) => {
      client.check({ service: serviceName }, { deadline: new Date(Date.now() + timeoutMs) }, (error, response) => {
        if (error) reject(new Error(error.details || error.message));
        else if (response?.status !== "SERVING") reject(new Error(`${serviceName} is ${response?.status ?? "UNKNOWN"}`));
        else resolve();
      });
    });
}
