import { createServer } from "node:net";

/** Below Linux's ephemeral range (32768-60999 by default), where the kernel never picks a port for a bind to port 0 or an outgoing connection. */
const FIRST = 20_000;
const LAST = 32_767;

/**
 * A TCP port free on every address right now, for a process the test starts.
 * It is drawn from below the ephemeral range: a port the kernel picked
 * (bind to 0) could be handed out again by the kernel to the started process
 * itself (its own fallback port, a connection) before it binds the one it was
 * told to, which once made a platform in CI collide with its own gRPC port.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port in ${FIRST}-${LAST} after 100 tries`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
  });
}
