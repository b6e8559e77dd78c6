// Entry of a signing worker thread. Workers do not inherit the `--import tsx`
// loader of the main thread (tsx issue #354), so the thread registers tsx
// itself before loading the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./signing-worker.ts");
