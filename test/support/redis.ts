import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDaemon, type Daemon } from "./daemon.js";
import { freePort } from "./ports.js";

export interface RedisServer {
  port: number;
  url: string;
  /** SIGTERM (Redis then writes its append-only file and exits) or SIGKILL. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Restarts on the same port after stop(); the data is gone unless `persistent`. */
  start(): Promise<void>;
  /** Stops it and removes its data for good. */
  remove(): Promise<void>;
}

/**
 * Starts a throwaway redis-server (from PATH, see scripts/testenv/setup.sh) on
 * a free port. `persistent`: as docs/telemetry.md recommends for usage counts,
 * appendonly yes with appendfsync everysec, in a data dir kept across stop()
 * and start().
 */
export async function startRedis(options: { persistent?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  let daemon: Daemon | undefined;
  const dataDir = options.persistent ? mkdtempSync(join(tmpdir(), `docservice-redis-${port}-data-`)) : undefined;
  const persistence = dataDir ? ["--appendonly", "yes", "--appendfsync", "everysec"] : ["--appendonly", "no"];

  const start = async () => {
    if (daemon) throw new Error(`redis on port ${port} is already running`);
    daemon = await startDaemon({
      name: `redis-${port}`,
      command: "redis-server",
      args: (dir) => [
        "--port", String(port),
        "--bind", "127.0.0.1",
        "--save", "",
        ...persistence,
        "--daemonize", "no",
        "--dir", dataDir ?? dir,
        "--loglevel", "warning",
      ],
      ready: () => redisPing(port),
    });
  };
  const stop = async (signal?: "SIGTERM" | "SIGKILL") => {
    const running = daemon;
    daemon = undefined;
    await running?.stop(signal);
  };
  const remove = async () => {
    await stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop, remove };
}

/** True if a Redis server answers PING (raw RESP) on host:port. */
export function redisPing(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
    socket.once("close", () => done(false));
  });
}
