import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

test("README.md starts with the two commands", () => {
  const firstBlock = /```sh[^\n]*\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  assert.deepEqual(
    firstBlock.trim().split("\n").map((line) => line.split("#")[0].trim()),
    ["npm start", "npm test"],
  );
});
