import { Worker } from "node:worker_threads";

const BOOTSTRAP = new URL("./typescript-worker.bootstrap.mjs", import.meta.url);

/** A worker thread running the TypeScript module at `module` (a file URL), with `data` as its `workerData.data`. */
export function startTypeScriptWorker(module: URL, data: unknown): Worker {
  return new Worker(BOOTSTRAP, { workerData: { module: module.href, data } });
}
