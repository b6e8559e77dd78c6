import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { VARIABLES } from "../services/configuration.js";
import { configurationReference, REFERENCE_PAGE, withReference } from "../scripts/write-config-reference.js";

const page = readFileSync(REFERENCE_PAGE, "utf8");

test("docs/configuration.md's reference is the one generated from every module's variables", () => {
  assert.equal(withReference(page, configurationReference()), page, "run `npm run generate`");
  for (const variable of Object.values(VARIABLES)) {
    assert.ok(page.includes(`| \`${variable.name}\` | ${variable.default === undefined ? "(unset)" : `\`${variable.default}\``} |`), `${variable.name} is missing from docs/configuration.md`);
  }
});
