import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pino } from "pino";
import { LOG_BUFFER } from "./logger.js";

const dir = mkdtempSync(join(tmpdir(), "docservice-logger-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Lines of varied lengths, some with characters of 2, 3 and 4 bytes in UTF-8. */
function lines(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `{"n":${i},"text":"${"é€😀x".repeat(i % 7).padEnd((i * 37) % 300, "-")}"}\n`);
}

/** Everything written through an asynchronous destination, with the event loop turning between writes, reaches the file whole and in order. */
async function roundTrip(name: string, options: { minLength: number; maxWrite: number }, written: string[]): Promise<void> {
  const file = join(dir, name);
  const destination = pino.destination({ dest: file, sync: false, ...options });
  for (const [i, line] of written.entries()) {
    destination.write(line);
    if (i % 97 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  // end() writes out what is buffered, then closes ("close"); flush(cb) is not the moment to read: when a write
  // is under way, its callback comes at the next "drain", which leaves up to minLength bytes still buffered.
  const closed = once(destination, "close");
  destination.end();
  await closed;
  assert.equal(readFileSync(file, "utf8"), written.join(""));
}

test("the logger's buffer sizes: every line arrives whole and in order", async () => {
  await roundTrip("buffer.log", LOG_BUFFER, lines(20_000));
});

test("small pieces (many chunks, multi-byte characters at their edges) arrive whole and in order too", async () => {
  await roundTrip("small.log", { minLength: 50, maxWrite: 120 }, lines(5_000));
});
