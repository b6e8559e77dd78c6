import type { InternalTransport } from "./access/internal-transport.js";
import type { Bridge } from "./contracts/bridge.js";
import type { CapacityHints, Module, ModuleContext, Role, RunningModule } from "./contracts/module.js";
import type { Route } from "./contracts/route.js";
import type { Config } from "./configuration.js";
import { ConfigError } from "./core/config.js";
import { DataDir } from "./core/data-dir.js";
import { ServiceError } from "./core/errors.js";
import type { HealthCheck } from "./core/health.js";
import type { Logger } from "./core/logger.js";
import type { MessageLimits } from "./core/message-limits.js";
import { remoteApi } from "./grpc/grpc-client.js";
import { remoteHealthCheck } from "./grpc/grpc-health-client.js";
import { hostedUnary, type HostedService } from "./grpc/grpc-host.js";
import type { Stop } from "./core/shutdown.js";

/** What the gateway serves of the modules: each one's routes and bridges over its API, wherever it runs. */
export interface Served {
  routes: Route[];
  bridges: Bridge[];
  health: Record<string, HealthCheck>;
  capacity: CapacityHints;
}

/**
 * The modules of one process: those its role runs, started in order, and
 * clients of the others at their addresses. One module reaches another
 * through {@link ModuleContext.use}, so neither knows where the other runs.
 */
export class ModuleSet {
  private readonly running = new Map<Module<any>, RunningModule<object>>();
  private readonly clients = new Map<Module<any>, object>();
  readonly context: ModuleContext;

  constructor(
    private readonly modules: readonly Module<any>[],
    private readonly role: Role,
    config: Config,
    transport: InternalTransport,
    logger: Logger,
  ) {
    this.context = {
      config,
      dataDir: new DataDir(config.dataDir),
      logger,
      transport,
      embedded: role === "all",
      use: (module) => (this.running.get(module)?.api ?? this.client(module, this.requiredAddress(module))) as never,
      healthOf: (module) => this.running.get(module)?.health ?? this.remoteHealth(module, this.requiredAddress(module)),
    };
  }

  /** Starts the modules of this role; returns how to stop each, in start order. */
  async start(): Promise<Stop[]> {
    const stops: Stop[] = [];
    for (const module of this.modules.filter((m) => m.roles.includes(this.role))) {
      const started = await module.start(this.context);
      this.running.set(module, started);
      stops.push(started.close);
    }
    return stops;
  }

  /** Healthy when every module started here is, dependencies included: a backend role's /health. */
  health(): HealthCheck {
    return all([...this.running.values()].map((started) => started.health));
  }

  /** Ready to take work when every module started here is, from its own state: a backend role's /readyz. */
  ready(): HealthCheck {
    return all([...this.running.values()].flatMap((started) => (started.ready ? [started.ready] : [])));
  }

  /** The gRPC services of the modules started here. */
  hosted(): HostedService[] {
    return [...this.running].flatMap(([module, started]): HostedService[] => {
      if (started.hosted) return started.hosted;
      return module.service ? [hostedUnary(module.service.descriptor.typeName, module.service.definition, started.api as never, started.health)] : [];
    });
  }

  /** This module's API when it runs here, else a client at its address when one is set. */
  reach<Api extends object>(module: Module<Api>): Api | undefined {
    const local = this.running.get(module)?.api as Api | undefined;
    const address = module.address?.of(this.context.config);
    return local ?? (address ? (this.client(module, address) as Api) : undefined);
  }

  /**
   * The routes and bridges of every module with a service, over its API
   * here or at its address. A module whose address is unset is not deployed
   * with this gateway: its routes and RPCs answer 503 saying so, and
   * /v1/health leaves it out.
   */
  served(messages: MessageLimits): Served {
    const { config, logger } = this.context;
    const served: Served = { routes: [], bridges: [], health: {}, capacity: {} };
    for (const module of this.modules.filter((m) => m.service)) {
      const local = this.running.get(module);
      const address = module.address?.of(config);
      let api = this.reach(module);
      if (local) {
        served.health[module.name] = local.health;
        Object.assign(served.capacity, local.capacity);
      } else if (address) {
        served.health[module.name] = this.remoteHealth(module, address);
      } else {
        logger.warn(`${module.address?.variable} is unset: the ${module.name} routes answer 503`);
        api = notDeployed(module);
      }
      served.routes.push(...(module.routes?.(api!, config, messages) ?? []));
      served.bridges.push({ ...module.service!, api: api! });
    }
    return served;
  }

  private client(module: Module<any>, address: string): object {
    const known = this.clients.get(module);
    if (known) return known;
    const { config, transport } = this.context;
    const client: object = module.connect
      ? module.connect(address, this.context)
      : remoteApi(module.service!.definition, { serviceName: `The ${module.name} service`, address, timeoutMs: module.address!.timeoutMs(config), transport }).api;
    this.clients.set(module, client);
    return client;
  }

  private remoteHealth(module: Module<any>, address: string): HealthCheck {
    const { config, transport } = this.context;
    return remoteHealthCheck(address, module.service!.descriptor.typeName, config.backendTimeoutMs, transport);
  }

  private requiredAddress(module: Module<any>): string {
    const address = module.address?.of(this.context.config);
    if (!address) throw new ConfigError([`${module.address?.variable ?? module.name}: required when this role runs without the ${module.name} module`]);
    return address;
  }
}

/** An API whose every method answers 503: the module is not part of this deployment. */
function notDeployed(module: Module<any>): object {
  const error = () => new ServiceError("UNAVAILABLE", `The ${module.name} service is not deployed with this gateway (${module.address?.variable} is unset).`);
  return new Proxy({}, { get: () => () => Promise.reject(error()) });
}

function all(checks: HealthCheck[]): HealthCheck {
  return async () => void (await Promise.all(checks.map((check) => check())));
}
