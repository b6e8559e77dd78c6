import { Worker, type ResourceLimits } from "node:worker_threads";

const TSX_BOOTSTRAP = new URL("./typescript-worker.bootstrap.mjs", import.meta.url);

/**
 * The URL of a worker module next to the calling module, named the way imports
 * are (`"./signing-worker.js"`): the `.js` file when the caller is compiled
 * JavaScript (dist/), the `.ts` source when the caller is itself a `.ts` file
 * run by tsx.
 */
export function workerModuleUrl(specifier: string, parentUrl: string): URL {
  if (!/^\.\.?\/.*\.js$/.test(specifier)) throw new Error(`a worker module is a relative .js specifier, not ${specifier}`);
  const url = new URL(specifier, parentUrl);
  if (new URL(parentUrl).pathname.endsWith(".ts")) url.pathname = url.pathname.replace(/\.js$/, ".ts");
  return url;
}

/**
 * A worker thread running the module `specifier` (relative to `parentUrl`, the
 * caller's `import.meta.url`; see {@link workerModuleUrl}) with `data` as its
 * `workerData.data`. Compiled, the thread loads the `.js` module directly and
 * nothing else. From the sources, the thread first registers tsx
 * (typescript-worker.bootstrap.mjs): workers do not inherit the main thread's
 * `--import tsx` loader (tsx issue #354). `resourceLimits` are the thread's
 * heap limits, as `new Worker` takes them.
 */
export function startTypeScriptWorker(specifier: string, parentUrl: string, data: unknown, resourceLimits?: ResourceLimits): Worker {
  const module = workerModuleUrl(specifier, parentUrl);
  const options = { workerData: { module: module.href, data }, resourceLimits };
  return new Worker(module.pathname.endsWith(".ts") ? TSX_BOOTSTRAP : module, options);
}
