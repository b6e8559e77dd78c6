import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { writeAtomically } from "./atomic-file.js";

const dir = mkdtempSync(join(tmpdir(), "docservice-atomic-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("the file is replaced whole, with the mode asked whatever the umask, and nothing is left beside it", async () => {
  const path = join(dir, "certificate.pem");
  await writeAtomically(path, "first");
  await writeAtomically(path, Buffer.from("second"), 0o640);
  assert.equal(readFileSync(path, "utf8"), "second");
  assert.equal(statSync(path).mode & 0o777, 0o640);
  assert.deepEqual(readdirSync(dir), ["certificate.pem"]);
});

test("a write that cannot be put in place fails and leaves no temporary file", async () => {
  const target = join(dir, "occupied");
  mkdirSync(join(target, "inside"), { recursive: true });
  await assert.rejects(writeAtomically(target, "bytes"));
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith("occupied.")), []);
});
