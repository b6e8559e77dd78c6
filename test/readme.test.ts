import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { VARIABLES } from "../services/configuration.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

test("README.md starts with the two commands", () => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  assert.deepEqual(
    firstBlock.trim().split("\n").map((line) => line.split("#")[0].trim()),
    ["npm start", "npm test"],
  );
});

test("README.md's configuration table lists every variable with its default", () => {
  for (const variable of Object.values(VARIABLES)) {
    const row = readme.split("\n").find((line) => line.startsWith(`| \`${variable.name}\` |`));
    assert.ok(row, `${variable.name} is missing from README.md`);
    assert.ok(row.includes(variable.default === undefined ? "(unset)" : `\`${variable.default}\``), `${variable.name}'s default is wrong in README.md`);
  }
});
