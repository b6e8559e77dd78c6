import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { VARIABLES } from "../services/configuration.js";
import { configurationReference, withReference } from "../scripts/write-config-reference.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

test("README.md starts with the two commands", () => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  assert.deepEqual(
    firstBlock.trim().split("\n").map((line) => line.split("#")[0].trim()),
    ["npm start", "npm test"],
  );
});

test("README.md's configuration reference is the one generated from every module's variables", () => {
  assert.equal(withReference(readme, configurationReference()), readme, "run `npm run generate`");
  for (const variable of Object.values(VARIABLES)) {
    assert.ok(readme.includes(`| \`${variable.name}\` | ${variable.default === undefined ? "(unset)" : `\`${variable.default}\``} |`), `${variable.name} is missing from README.md`);
  }
});
