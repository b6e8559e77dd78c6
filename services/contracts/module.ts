import type { PlatformConfig } from "../core/config.js";
import type { DataDir } from "../core/data-dir.js";
import type { HealthCheck } from "../core/health.js";
import type { Logger } from "../core/logger.js";
import type { MessageLimits } from "../core/message-limits.js";
import type { InternalTransport } from "../access/internal-transport.js";
import type { HostedService } from "../grpc/grpc-host.js";
import type { ServiceBinding } from "./bridge.js";
import type { Route } from "./route.js";

/**
 * What one process runs: `all` (the default) every module with embedded
 * defaults; `gateway` the public HTTP server alone, reaching the modules over
 * gRPC; each other role the modules that name it.
 */
export const ROLES = ["all", "gateway", "keys", "conversion", "signing", "telemetry", "aggregator"] as const;
export type Role = (typeof ROLES)[number];

/** How many requests of a kind the platform works on at once, where the gateway knows (the module runs beside it). */
export interface CapacityHints {
  convert?: number;
  sign?: number;
}

/** What a module is given when it starts in this process; `Settings` is what it reads of the configuration. */
export interface ModuleContext<Settings = PlatformConfig> {
  config: Settings;
  dataDir: DataDir;
  logger: Logger;
  transport: InternalTransport;
  /** Every module runs in this one process (role `all`). */
  embedded: boolean;
  /** Another module's API: the one running in this process, or a client of it at its address (a ConfigError when unset). */
  use<Api extends object>(module: Module<Api, never>): Api;
  /** Another module's health: its own check when it runs here, else the gRPC health of its service at its address. */
  healthOf(module: Module<object, never>): HealthCheck;
}

/** A module started in this process. */
export interface RunningModule<Api extends object> {
  api: Api;
  /** Its gRPC services, on the process's one gRPC port; by default its {@link ServiceBinding}'s unary methods served by `api`. */
  hosted?: HostedService[];
  health: HealthCheck;
  /**
   * Whether this process can take the module's work now, from its own state
   * only (its LibreOffice pool started), never from a dependency every replica
   * shares (Redis, an HSM, Gotenberg), whose outage would take every replica
   * out of its Service at once; absent, it is ready once started. A backend
   * pod's readiness (the metrics listener's /readyz).
   */
  ready?: HealthCheck;
  capacity?: CapacityHints;
  close(): Promise<void>;
}

/** Where a module is found when it runs in another process. */
export interface ModuleAddress<Settings> {
  /** The variable that holds its host:port, e.g. KEYS_SERVICE_ADDR. */
  variable: string;
  of(config: Settings): string | undefined;
  /** Deadline of one call to it, whatever the call waits for on its side. */
  timeoutMs(config: Settings): number;
}

/**
 * One capability, as the process and the gateway see it. `main.ts` starts
 * the modules of its role and the gateway serves the routes and bridges of
 * every module, in process or over gRPC; neither knows any capability by
 * name. Who may call each route and RPC stays in services/access/access-rules.ts.
 * Its configuration section is declared beside it (`config.ts`) and gathered
 * with the others in services/configuration.ts, read in one pass at start-up.
 */
export interface Module<Api extends object = object, Settings = PlatformConfig> {
  /** Its name in logs and in /v1/health. */
  name: string;
  /** The roles whose process runs it. */
  roles: readonly Role[];
  /** The protobuf service it serves, when it serves one. */
  service?: ServiceBinding;
  /** How other processes reach it; absent for a module no other process calls. */
  address?: ModuleAddress<Settings>;
  /** Starts it in this process. */
  start(context: ModuleContext<Settings>): Promise<RunningModule<Api>>;
  /** A client of it at `address`; by default a unary gRPC client of its service. */
  connect?(address: string, context: ModuleContext<Settings>): Api;
  /** Its /v1 routes, served over `api` wherever the module runs. */
  routes?(api: Api, config: Settings, messages: MessageLimits): Route[];
}
