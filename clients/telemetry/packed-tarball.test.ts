/**
 * Tests what ships: `npm pack` of clients/telemetry (its prepack builds
 * dist/), the tarball installed into a fresh project outside the repository,
 * then imported by plain `node` (no TypeScript loader) and type-checked as a
 * consumer would with tsc (strict, NodeNext). Needs npm and fflate from the
 * npm cache or the registry.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { makeDocx } from "../../test/support/docx-fixtures.js";
import { codeBlocks } from "../../test/support/markdown.js";
import { installPackedTelemetryClient, plainEnv, telemetryManifest, typecheckConsumer, type PackedPackage, type PackResult } from "../../test/support/packed-package.js";
import { wordTimestamp } from "./index.js";
import { corpusDocx, expectedId, partText } from "./test/docx.js";

const run = promisify(execFile);
const manifest = telemetryManifest;

let packed: PackedPackage;
let work = "";
let pack: PackResult;
let project = "";
let installed = "";

before(async () => {
  packed = await installPackedTelemetryClient();
  ({ work, pack, project, installed } = packed);
});

after(() => packed?.remove());

describe("the packed @docservice/telemetry tarball", { timeout: 180_000 }, () => {
  test("holds the built JavaScript, its declarations, README, CHANGELOG, LICENSE, notices and package.json only", () => {
    const paths = pack.files.map((file) => file.path).sort();
    const fixed = ["package.json", "README.md", "CHANGELOG.md", "LICENSE", "dist/THIRD-PARTY-NOTICES"];
    for (const path of [...fixed, "dist/index.js", "dist/index.d.ts"]) assert.ok(paths.includes(path), `${path} not in ${paths.join(", ")}`);
    for (const path of paths) {
      assert.ok(fixed.includes(path) || /^dist\/[\w-]+\.(?:js|d\.ts)$/.test(path), `unexpected ${path}`);
    }
    assert.equal(readFileSync(join(installed, "LICENSE"), "utf8"), readFileSync(new URL("../../LICENSE", import.meta.url), "utf8"));
    assert.match(readFileSync(join(installed, "dist/THIRD-PARTY-NOTICES"), "utf8"), /^fflate@[\d.]+\nLicense: MIT\n/m);
    assert.match(readFileSync(join(installed, "dist/index.js"), "utf8"), /^\/\*! @docservice\/telemetry [\d.]+ \| SPDX-License-Identifier: AGPL-3.0-only /);
    // Every library module has its declaration (index.d.ts re-exports them by name).
    for (const [, module] of readFileSync(join(installed, "dist/index.d.ts"), "utf8").matchAll(/from "\.\/([\w-]+)\.js"/g)) {
      assert.ok(paths.includes(`dist/${module}.d.ts`), `dist/${module}.d.ts`);
    }
  });

  test("its package.json points Node and TypeScript at dist/ and keeps fflate as its dependency", () => {
    const packed = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      version: string;
      exports: Record<string, Record<string, string>>;
      dependencies: Record<string, string>;
    };
    assert.equal(packed.version, manifest.version);
    assert.deepEqual(packed.exports["."], { types: "./dist/index.d.ts", default: "./dist/index.js" });
    assert.ok(packed.dependencies["fflate"], "fflate is a dependency");
    assert.ok(existsSync(join(project, "node_modules", "fflate", "package.json")), "npm installed fflate with it");
    const code = readFileSync(join(installed, "dist/index.js"), "utf8");
    const specifiers = [...code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gm)].map(([, specifier]) => specifier);
    assert.deepEqual([...new Set(specifiers)], ["fflate"], "one bundled module importing only fflate");
  });

  test("plain node imports it and computes real document ids, stamps and reports", async () => {
    const word = corpusDocx("1-page.docx"); // Word's own file: w15:docId + dcterms:created
    const guid = /<w15:docId w15:val="\{([0-9A-F-]+)\}"/.exec(partText(word, "word/settings.xml")!)![1]!;
    const created = /<dcterms:created[^>]*>([^<]+)</.exec(partText(word, "docProps/core.xml")!)![1]!;
    const plain = new Uint8Array(makeDocx(["packed"])); // no GUID, no created time
    writeFileSync(join(work, "word.docx"), word);
    writeFileSync(join(work, "plain.docx"), plain);
    const stampGuid = "0F1E2D3C-4B5A-4987-8695-A4B3C2D1E0F9";
    const now = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));

    const script = `
      import { readFileSync } from "node:fs";
      import { computeDocumentId, stampDocument, createUsageTracker, openDocumentSession, LIBRARY_VERSION } from "${manifest.name}";
      const read = (name) => new Uint8Array(readFileSync(process.env.WORK + "/" + name));
      const sent = [];
      const tracker = createUsageTracker({ licenseKey: "lic-1", telemetry: { endpoint: "http://collector.test/v1/collect" }, fetch: (url, init) => { sent.push({ url, init }); } });
      const stamped = stampDocument(read("plain.docx"), { documentGuid: process.env.STAMP_GUID, now: new Date(process.env.NOW) });
      console.log(JSON.stringify({
        resolved: import.meta.resolve("${manifest.name}"),
        version: LIBRARY_VERSION,
        word: computeDocumentId(read("word.docx")),
        plain: computeDocumentId(read("plain.docx")),
        stamped: computeDocumentId(stamped),
        opened: tracker.trackOpen(read("word.docx")),
        session: (({ documentId, documentGuid }) => ({ documentId, documentGuid }))(openDocumentSession(read("word.docx"))),
        sent: sent.map(({ url, init }) => ({ url, headers: init.headers, body: JSON.parse(init.body) })),
      }));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: project,
      env: { ...plainEnv, WORK: work, STAMP_GUID: stampGuid, NOW: now.toISOString() },
    });
    const result = JSON.parse(stdout) as {
      resolved: string;
      version: string;
      word: { documentId: string; documentGuid: string | null; documentCreatedAt: string | null };
      plain: { documentId: string; documentGuid: string | null; documentCreatedAt: string | null };
      stamped: { documentId: string; documentGuid: string | null; documentCreatedAt: string | null };
      opened: { documentId: string };
      session: { documentId: string; documentGuid: string };
      sent: { url: string; headers: Record<string, string>; body: { libraryVersion: string; events: { documentId: string }[] } }[];
    };

    assert.equal(fileURLToPath(result.resolved), join(installed, "dist", "index.js"), "the installed build, not the sources");
    assert.equal(result.version, manifest.version);
    assert.deepEqual(result.word, { documentId: expectedId(`${guid}|${created}`), documentGuid: guid, documentCreatedAt: created });
    assert.deepEqual(result.plain, { documentId: expectedId(plain), documentGuid: null, documentCreatedAt: null });
    const stampedCreated = wordTimestamp(now);
    assert.deepEqual(result.stamped, {
      documentId: expectedId(`${stampGuid}|${stampedCreated}`),
      documentGuid: stampGuid,
      documentCreatedAt: stampedCreated,
    });
    assert.equal(result.opened.documentId, result.word.documentId);
    assert.deepEqual(result.session, { documentId: result.word.documentId, documentGuid: result.word.documentGuid });
    assert.equal(result.sent.length, 1);
    assert.equal(result.sent[0]!.url, "http://collector.test/v1/collect");
    assert.equal(result.sent[0]!.headers["X-License-Key"], "lic-1");
    assert.equal(result.sent[0]!.body.libraryVersion, manifest.version);
    assert.deepEqual(result.sent[0]!.body.events.map((event) => event.documentId), [result.word.documentId]);
  });

  test("require() from CommonJS loads it (Node's require of an ES module, Node 20.19 and later)", async () => {
    writeFileSync(join(project, "consumer.cjs"), `const telemetry = require("${manifest.name}");\nprocess.stdout.write(JSON.stringify([typeof telemetry.computeDocumentId, typeof telemetry.createUsageTracker, telemetry.LIBRARY_VERSION]));\n`);
    const { stdout } = await run(process.execPath, ["consumer.cjs"], { cwd: project, env: plainEnv });
    assert.deepEqual(JSON.parse(stdout), ["function", "function", manifest.version]);
  });

  test("its declarations type-check a strict consumer, and its README's example as printed, under node10, node16, NodeNext (browser and Node) and bundler resolution", async () => {
    const consumer = `import { computeDocumentId, createUsageTracker, stampDocument, type DocumentIdentity, type MetadataDrop, type TelemetryDebugEvent, type UsageTracker } from "${manifest.name}";

const bytes: Uint8Array = stampDocument(new Uint8Array(0), { documentGuid: "guid", now: new Date() });
const identity: DocumentIdentity = computeDocumentId(bytes);
const id: string = identity.documentId;
const created: string | null = identity.documentCreatedAt;
const tracker: UsageTracker = createUsageTracker({ licenseKey: "k", telemetry: { enabled: false, metadata: { customerId: "c-1" } } });
const opened: DocumentIdentity | null = tracker.trackOpen(bytes);
// @ts-expect-error a document id is a string
const wrong: number = identity.documentId;
createUsageTracker({ telemetry: { metadata: { tenant: "t1", user: null, ctx: { plan: "pro", seats: [1, 2] } }, debug: (event: TelemetryDebugEvent) => event.dropped.map((drop: MetadataDrop) => drop.path) } });
// @ts-expect-error metadata is an object of named values
createUsageTracker({ telemetry: { metadata: "tenant-1" } });
export { id, created, opened, wrong };
`;
    // the README that ships in the tarball: its example as a front end copies it, given the bytes it names
    const [example] = codeBlocks(installed, "README.md").filter((block) => block.language === "ts");
    assert.ok(example?.code.includes(`from "${manifest.name}"`), "the README's TypeScript example imports the package");
    const readmeExample = `declare const docxBytes: Uint8Array;\ndeclare const exportedBytes: Uint8Array;\n${example.code}\nexport {};\n`;
    const read = await typecheckConsumer(project, manifest.name, consumer, { "readme-example.ts": readmeExample });
    for (const [config, files] of Object.entries(read)) {
      assert.ok(files.some((file) => file.endsWith("/dist/index.d.ts")), `${config}: ${files.join(", ")}`);
      assert.ok(files.every((file) => file.endsWith(".d.ts")), `${config} read only declarations: ${files.join(", ")}`);
    }
  });
});
