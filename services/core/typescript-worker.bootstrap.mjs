// Entry of a worker thread whose module is a .ts source (typescript-worker.ts;
// compiled .js modules start directly, without this file): workers do not
// inherit the `--import tsx` loader of the main thread (tsx issue #354), so the
// thread registers tsx itself before loading the module in `workerData.module`.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
