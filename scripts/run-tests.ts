// npm test's runner (scripts/test.sh): node:test over the files given, three at a time, in the order
// given; `node --test` sorts its files by path, which would undo the order scripts/test.sh chooses
// (and says why). The --import flags this process is started with reach every file's process, as
// with `node --test`.
import { run } from "node:test";
import { spec } from "node:test/reporters";

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: run-tests.ts <test file>...");

run({
  files,
  concurrency: 3,
  // A test that hangs fails after 15 minutes (the longest, the autoscaling ramp, takes about 6 and sets its own), and a
  // file whose tests are done exits even if a client it left open would keep it alive: either would otherwise hold the
  // whole run until CI's limit, without saying which test it was.
  timeout: 15 * 60_000,
  forceExit: true,
})
  .on("test:summary", (summary) => {
    if (!summary.success) process.exitCode = 1;
  })
  .compose(spec)
  .pipe(process.stdout);
