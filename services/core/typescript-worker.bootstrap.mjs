// Entry of every worker thread: workers do not inherit the `--import tsx`
// loader of the main thread (tsx issue #354), so the thread registers tsx
// itself before loading the TypeScript module named in `workerData.module`.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
