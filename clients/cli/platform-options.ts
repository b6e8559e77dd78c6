import { Option, type Command } from "commander";
import { PlatformClient } from "./platform-client.js";

const DEFAULT_CONCURRENCY = 4;

export interface PlatformFlags {
  url: string;
  key?: string;
  concurrency?: number;
}

/** --url and --key (or DOCSERVICE_URL and DOCSERVICE_API_KEY) on a command. */
export function withPlatformOptions(command: Command, needsKey: boolean): Command {
  return command
    .addOption(new Option("--url <url>", "the platform's base URL").env("DOCSERVICE_URL").default("http://localhost:8080"))
    .addOption(new Option("--key <apiKey>", `API key${needsKey ? "" : " (not needed here)"}`).env("DOCSERVICE_API_KEY"));
}

export function platformClient(flags: PlatformFlags, needsKey: boolean): PlatformClient {
  if (needsKey && !flags.key) throw new Error("an API key is needed: --key, or DOCSERVICE_API_KEY (docservice keys register gets one)");
  return new PlatformClient(flags.url, flags.key);
}

/**
 * --concurrency when given; else what the platform's /v1/health says it works
 * on at once for this kind of request (embedded mode says), else 4.
 */
export async function concurrencyFor(client: PlatformClient, kind: "convert" | "sign", flags: PlatformFlags): Promise<number> {
  if (flags.concurrency) return flags.concurrency;
  try {
    const health = await client.json<{ capacity?: Partial<Record<"convert" | "sign", number>> }>("GET", "/v1/health");
    return health.capacity?.[kind] ?? DEFAULT_CONCURRENCY;
  } catch {
    return DEFAULT_CONCURRENCY; // a degraded platform answers 503: the jobs will say what is wrong
  }
}

export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`"${value}" is not a positive integer`);
  return n;
}
