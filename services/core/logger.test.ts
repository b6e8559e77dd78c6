import assert from "node:assert/strict";
import { once } from "node:events";
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
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

test("a flush asked for while a write is under way writes the rest once that write ends (it used to wait for the next flush)", async () => {
  const fifo = join(dir, "slow-reader.fifo");
  execFileSync("mkfifo", [fifo]);
  // Read non-blocking, and not yet: the pipe (64 KB) fills and the first write stays under way.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const destination = pino.destination({ dest: fifo, sync: false, ...LOG_BUFFER });
  try {
    await once(destination, "ready");
    const burst = lines(2_000).join("");
    assert.ok(Buffer.byteLength(burst) > 2 * LOG_BUFFER.minLength);
    destination.write(burst);
    await sleep(100);
    destination.write("last line\n");
    destination.flush();

    const expected = Buffer.byteLength(burst) + "last line\n".length;
    const received: Buffer[] = [];
    let bytes = 0;
    const deadline = Date.now() + 5000;
    while (bytes < expected && Date.now() < deadline) {
      const chunk = Buffer.alloc(64 * 1024);
      let n = 0;
      try {
        n = readSync(reader, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      }
      if (n > 0) {
        received.push(chunk.subarray(0, n));
        bytes += n;
      } else await sleep(5);
    }
    assert.equal(Buffer.concat(received).toString("utf8"), burst + "last line\n");
  } finally {
    destination.destroy();
    closeSync(reader);
  }
});
