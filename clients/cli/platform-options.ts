import { Option, type Command } from "commander";
import { createDocServiceClient, describeError, isDocServiceError, type DocServiceClient } from "../client/index.js";

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

/** The typed /v1 client (@docservice/client) of the platform the flags name. */
export function platformClient(flags: PlatformFlags, needsKey: boolean): DocServiceClient {
  if (needsKey && !flags.key) throw new Error("an API key is needed: --key, or DOCSERVICE_API_KEY (docservice keys register gets one)");
  return createDocServiceClient({ baseUrl: flags.url, apiKey: flags.key });
}

/**
 * The answer of a call, or an Error saying what the platform said (its error
 * body) or why it could not be reached.
 */
export async function answerOf<Result extends { data?: unknown; error?: unknown; response: Response }>(call: Promise<Result>): Promise<NonNullable<Result["data"]>> {
  let result: Result;
  try {
    result = await call;
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    throw new Error(`cannot reach the platform: ${cause?.message ?? (error as Error).message}`);
  }
  const { data, error, response } = result;
  if (error === undefined) return data as NonNullable<Result["data"]>;
  throw new Error(`${response.status} ${isDocServiceError(error) ? describeError(error) : String(error).slice(0, 200)}`);
}

/**
 * --concurrency when given; else what the platform's /v1/health says it works
 * on at once for this kind of request (embedded mode says), else 4.
 */
export async function concurrencyFor(client: DocServiceClient, kind: "convert" | "sign", flags: PlatformFlags): Promise<number> {
  if (flags.concurrency) return flags.concurrency;
  try {
    const health = await answerOf(client.GET("/v1/health"));
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
