// @docservice/client and @docservice/cli as they ship: each packed from its
// directory, installed from the tarball in a temporary directory outside this
// repository (the client into an empty project, the CLI with `npm install -g`
// under a prefix of its own), then used against a running platform with plain
// node: typed calls and typed errors from the client, a convert, sign and
// verify round trip from the installed `docservice` command. The telemetry
// package has its own (clients/telemetry/packed-tarball.test.ts and
// test/integration/telemetry-contract.test.ts).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { corpusFile } from "../support/corpus.js";
import { codeBlocks } from "../support/markdown.js";
import { installPacked, manifestOf, packageDir, plainEnv, typecheckConsumer, type PackedPackage } from "../support/packed-package.js";
import { startPlatform, type Platform } from "../support/platform.js";

const run = promisify(execFile);
const DOCX = "1-page.docx";
const LICENSE = readFileSync(new URL("../../LICENSE", import.meta.url), "utf8");
const ROOT_VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** The tarball holds `expected` (and dist/ files matching `dist`), nothing else; the LICENSE is the platform's. */
function assertTarball(packed: PackedPackage, expected: string[], dist: RegExp): void {
  const paths = packed.pack.files.map((file) => file.path).sort();
  for (const path of expected) assert.ok(paths.includes(path), `${path} not in ${paths.join(", ")}`);
  for (const path of paths) assert.ok(expected.includes(path) || dist.test(path), `unexpected ${path}`);
  assert.equal(readFileSync(join(packed.installed, "LICENSE"), "utf8"), LICENSE);
  console.log(`${packed.pack.filename}: ${packed.pack.size} bytes, ${paths.length} files`);
}

describe("the packed @docservice/client and @docservice/cli against a running platform", { timeout: 600_000 }, () => {
  let platform: Platform;
  let client: PackedPackage;
  let cli: PackedPackage;

  before(async () => {
    [platform, client, cli] = await Promise.all([
      startPlatform({ CONVERSION_POOL_SIZE: "1" }),
      installPacked(packageDir("client")),
      installPacked(packageDir("cli"), { global: true }),
    ]);
  });

  after(async () => {
    await platform?.stop();
    client?.remove();
    cli?.remove();
  });

  test("@docservice/client: the tarball holds its build, declarations, OpenAPI document, README, CHANGELOG, LICENSE and notices", () => {
    assertTarball(
      client,
      ["package.json", "README.md", "CHANGELOG.md", "LICENSE", "openapi.json", "dist/index.js", "dist/index.d.ts", "dist/openapi-schema.d.ts", "dist/THIRD-PARTY-NOTICES"],
      /^dist\/[\w-]+\.d\.ts$/,
    );
    assert.equal(manifestOf(client.installed).version, ROOT_VERSION);
    assert.match(readFileSync(join(client.installed, "dist/THIRD-PARTY-NOTICES"), "utf8"), /^openapi-fetch@[\d.]+\nLicense: MIT\n/m);
  });

  test("@docservice/client: declarations type-check a consumer's calls, and refuse a wrong path or body, under five resolutions", async () => {
    const read = await typecheckConsumer(
      client.project,
      "@docservice/client",
      `import { createDocServiceClient, describeError, type DocServiceError } from "@docservice/client";

const client = createDocServiceClient({ baseUrl: "http://localhost:8080", apiKey: "dsk_x" });
export async function use(): Promise<string> {
  const health = await client.GET("/v1/health");
  const status: string | undefined = health.data?.status;
  const signed = await client.POST("/v1/sign", { body: { document: { base64: "" }, signer: { name: "Ada", email: "ada@example.com" }, auditTrail: [] } });
  const failure: DocServiceError | undefined = signed.error;
  const usage = await client.GET("/v1/usage", { params: { query: { licenseKey: "lic_x", from: "2026-11-01", to: "2026-11-30" } } });
  const documents: number | undefined = usage.data?.documents;
  const converted = await client.POST("/v1/convert", { params: { query: { from: "docx" } }, body: { file: new Blob(["x"]) }, parseAs: "arrayBuffer" });
  const pdfBytes: number | undefined = converted.data?.byteLength;
  // @ts-expect-error a file is a Blob, not its name
  await client.POST("/v1/convert", { params: { query: { from: "docx" } }, body: { file: "report.docx" } });
  // @ts-expect-error no such route
  await client.GET("/v1/nothing");
  // @ts-expect-error a signer needs an e-mail address
  await client.POST("/v1/sign", { body: { document: { base64: "" }, signer: { name: "Ada" }, auditTrail: [] } });
  return [status, failure && describeError(failure), documents, pdfBytes].join();
}
`,
    );
    for (const [config, files] of Object.entries(read)) {
      assert.ok(files.some((file) => file.endsWith("/dist/index.d.ts")), `${config}: ${files.join(", ")}`);
      assert.ok(files.every((file) => file.endsWith(".d.ts")), `${config} read only declarations: ${files.join(", ")}`);
    }
  });

  test("@docservice/client: plain node gets typed answers, the platform's errors as values, and a converted PDF", async () => {
    writeFileSync(join(client.project, "document.docx"), corpusFile(DOCX));
    writeFileSync(
      join(client.project, "use.mjs"),
      `import { readFileSync } from "node:fs";
import { createDocServiceClient, isDocServiceError } from "@docservice/client";

const [baseUrl, apiKey] = process.argv.slice(2);
const anonymous = createDocServiceClient({ baseUrl });
const client = createDocServiceClient({ baseUrl, apiKey });
const health = await anonymous.GET("/v1/health");
const refused = await anonymous.POST("/v1/sign", { body: { document: { base64: "" }, signer: { name: "Ada", email: "ada@example.com" } } });
const invalid = await client.POST("/v1/sign", { body: { document: { base64: "" }, signer: { name: "Ada", email: "not an address" } } });
const file = new File([readFileSync("document.docx")], "document.docx");
const converted = await client.POST("/v1/convert", { params: { query: { from: "docx" } }, body: { file }, parseAs: "arrayBuffer" });
process.stdout.write(JSON.stringify({
  health: [health.response.status, health.data.version],
  refused: [refused.response.status, refused.error.code, isDocServiceError(refused.error)],
  invalid: [invalid.response.status, invalid.error.code, invalid.error.details.map((d) => d.field)],
  converted: [converted.response.status, Buffer.from(converted.data).subarray(0, 5).toString()],
}));
`,
    );
    const { stdout } = await run(process.execPath, ["use.mjs", platform.base, platform.apiKey], { cwd: client.project, env: plainEnv });
    const answers = JSON.parse(stdout) as Record<string, unknown[]>;
    assert.deepEqual(answers.health, [200, ROOT_VERSION]);
    assert.deepEqual(answers.refused, [401, "UNAUTHENTICATED", true]);
    assert.equal(answers.invalid[0], 400);
    assert.equal(answers.invalid[1], "VALIDATION_ERROR");
    assert.ok((answers.invalid[2] as string[]).includes("signer.email"), JSON.stringify(answers.invalid));
    assert.deepEqual(answers.converted, [200, "%PDF-"]);
  });

  test("@docservice/client: the README's example, as the tarball ships it, type-checks (strict, NodeNext, Node's types) and runs against the platform", async () => {
    const [example] = codeBlocks(client.installed, "README.md").filter((block) => block.language === "ts");
    assert.ok(example, "no ts example in the README");
    copyFileSync(fileURLToPath(new URL("../../examples/contract.docx", import.meta.url)), join(client.project, "contract.docx"));
    const source = example.code.replaceAll("http://localhost:8080", platform.base);
    await typecheckConsumer(client.project, "@docservice/client", source, {}, ["nodenext-node"]);
    writeFileSync(join(client.project, "example.mts"), source);
    const { stdout } = await run(process.execPath, ["example.mts"], { cwd: client.project, env: { ...plainEnv, DOCSERVICE_API_KEY: platform.apiKey } });
    assert.equal(stdout.trim(), "contract.signed.pdf");
    const signed = readFileSync(join(client.project, "contract.signed.pdf"));
    assert.equal(signed.subarray(0, 5).toString(), "%PDF-");
    assert.match(signed.toString("latin1"), /\/ByteRange\s*\[/);
  });

  test("@docservice/cli: the tarball holds the compiled command, README, CHANGELOG, LICENSE and notices; no TypeScript at run time", () => {
    assertTarball(cli, ["package.json", "README.md", "CHANGELOG.md", "LICENSE", "dist/docservice.js", "dist/THIRD-PARTY-NOTICES"], /^$/);
    const installed = readdirSync(join(cli.installed, "node_modules"));
    for (const absent of ["tsx", "typescript", "esbuild"]) assert.ok(!installed.includes(absent), `${absent} installed with the CLI`);
    assert.match(readFileSync(join(cli.installed, "dist/docservice.js"), "utf8"), /^#!\/usr\/bin\/env node\n/);
  });

  test("@docservice/cli: `npm install -g` gives a docservice command: --version, --help, and convert, sign and verify against the platform", async () => {
    const docservice = join(cli.project, "bin", "docservice");
    const work = join(cli.work, "documents");
    mkdirSync(join(work, "in"), { recursive: true });
    writeFileSync(join(work, "in", "contract.docx"), corpusFile(DOCX));
    const env = { ...plainEnv, DOCSERVICE_URL: platform.base, DOCSERVICE_API_KEY: platform.apiKey };
    const docserviceRun = (args: string[]) => run(docservice, args, { cwd: work, env, maxBuffer: 8 << 20 });

    assert.equal((await docserviceRun(["--version"])).stdout.trim(), ROOT_VERSION);
    const help = (await docserviceRun(["--help"])).stdout;
    for (const command of ["convert", "sign", "verify", "annotate", "keys"]) assert.match(help, new RegExp(`^\\s+${command}\\b`, "m"), `--help lists ${command}`);

    await docserviceRun(["convert", "in", "--out", "pdf"]);
    assert.equal(readFileSync(join(work, "pdf", "contract.pdf")).subarray(0, 5).toString(), "%PDF-");
    await docserviceRun(["sign", "pdf", "--signer-name", "Ada Lovelace", "--signer-email", "ada@example.com"]);
    assert.equal(readFileSync(join(work, "pdf", "contract.signed.pdf")).subarray(0, 5).toString(), "%PDF-");
    await docserviceRun(["verify", join("pdf", "contract.signed.pdf"), "--out", "checked"]);
    const verification = JSON.parse(readFileSync(join(work, "checked", "contract.signed.verify.json"), "utf8")) as { valid: boolean; signers: { name: string }[] };
    assert.equal(verification.valid, true);
    assert.deepEqual(verification.signers.map((s) => s.name), ["Ada Lovelace"]);

    // the platform's error body, as the CLI tells it
    const refused = await docserviceRun(["sign", join("in", "contract.docx"), "--signer-name", "Ada", "--signer-email", "not an address", "--out", "refused"]).then(
      () => assert.fail("an invalid signer address must fail the run"),
      (error: { code?: number; stderr?: string; stdout?: string }) => error,
    );
    assert.equal(refused.code, 1);
    assert.match(`${refused.stdout}${refused.stderr}`, /400 VALIDATION_ERROR: .*signer\.email/);
  });
});
