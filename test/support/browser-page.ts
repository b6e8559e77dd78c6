/**
 * What the browser tests serve: a module bundled for the browser with esbuild
 * or Rollup, in memory, and a loopback static site (its own origin) holding a
 * test page and its files. Not a test file itself.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import { build } from "esbuild";
import { rollup } from "rollup";

/** One ESM file for the browser holding `entry` and everything it imports. */
export async function bundleForBrowser(entry: URL): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2020",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/**
 * One ES module for the browser holding `entry` (a file path) and what it
 * imports, as Rollup bundles it with Node's package resolution from the
 * entry's directory (browser fields preferred). A warning fails the bundle:
 * a package that bundles only with warnings does not bundle cleanly.
 */
export async function bundleWithRollup(entry: string): Promise<string> {
  const bundle = await rollup({
    input: entry,
    plugins: [nodeResolve({ browser: true })],
    onwarn: (warning) => {
      throw new Error(`rollup: ${warning.message}`);
    },
  });
  try {
    const { output } = await bundle.generate({ format: "es" });
    return output[0].code;
  } finally {
    await bundle.close();
  }
}

export interface StaticFile {
  readonly type: string;
  readonly body: string | Uint8Array;
}

export interface StaticSite {
  /** e.g. "http://127.0.0.1:40123", no trailing slash. */
  readonly origin: string;
  close(): Promise<void>;
}

/**
 * Serves `files` (by path, e.g. "/index.html") on 127.0.0.1 at a free port:
 * GET only, no caching, 404 for anything else.
 */
export async function serveStatic(files: Readonly<Record<string, StaticFile>>): Promise<StaticSite> {
  const server = createServer((request, response) => {
    const file = request.method === "GET" ? files[new URL(request.url ?? "/", "http://site").pathname] : undefined;
    if (!file) {
      response.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, { "Content-Type": file.type, "Cache-Control": "no-store" }).end(file.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
