import { connect } from "node:net";
import { startDaemon, type Daemon } from "./daemon.js";
import { freePort } from "./ports.js";

export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
  /** Restarts on the same port after stop(); the data is gone (nothing is persisted). */
  start(): Promise<void>;
}

/** Starts a throwaway redis-server (from PATH, see scripts/testenv/setup.sh) on a free port. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let daemon: Daemon | undefined;

  const start = async () => {
    if (daemon) throw new Error(`redis on port ${port} is already running`);
    daemon = await startDaemon({
      name: `redis-${port}`,
      command: "redis-server",
      args: (dir) => [
        "--port", String(port),
        "--bind", "127.0.0.1",
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
        "--dir", dir,
        "--loglevel", "warning",
      ],
      ready: () => redisPing(port),
    });
  };
  const stop = async () => {
    const running = daemon;
    daemon = undefined;
    await running?.stop();
  };

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop };
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
