import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { bundleForBrowser } from "../../test/support/browser-page.js";
import * as telemetry from "./index.js";

const here = new URL("./", import.meta.url);
const librarySources = readdirSync(here).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));

test("the entry exports computeDocumentId, stampDocument, document sessions and the tracker", () => {
  for (const name of ["computeDocumentId", "stampDocument", "openDocumentSession", "createUsageTracker"] as const) {
    assert.equal(typeof telemetry[name], "function", name);
  }
});

test("LIBRARY_VERSION is package.json's version", () => {
  const manifest = JSON.parse(readFileSync(new URL("package.json", here), "utf8")) as { version: string; name: string };
  assert.equal(telemetry.LIBRARY_VERSION, manifest.version);
  assert.equal(manifest.name, "@docservice/telemetry");
});

test("library code imports only its own modules and fflate, and uses no Node-only globals", () => {
  assert.ok(librarySources.includes("index.ts"));
  let imports = 0;
  for (const name of librarySources) {
    const source = readFileSync(new URL(name, here), "utf8");
    for (const [, specifier] of source.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)";/gm)) {
      assert.ok(specifier!.startsWith("./") || specifier === "fflate", `${name} imports ${specifier}`);
      imports++;
    }
    assert.doesNotMatch(source, /\bBuffer\.|\bprocess\.|\brequire\(/, name);
  }
  assert.ok(imports > 20, `${imports} imports checked`);
});

test("bundles for the browser with esbuild", async () => {
  const bundle = await bundleForBrowser(new URL("index.ts", here)); // a failed build throws
  assert.ok(bundle.includes("HASH-"), "the bundle holds the library");
  assert.doesNotMatch(bundle, /from\s*["']node:/);
});
