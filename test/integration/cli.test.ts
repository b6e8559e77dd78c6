// `npx docservice` (the package's bin) end to end against embedded mode: an
// API key by e-mail, a folder of corpus documents converted with its tree
// mirrored, a bad file reported while the rest carry on, an interrupted run
// resumed, signing and verifying the results, templates filled, and the
// progress bar on a terminal.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { corpusPath } from "../support/corpus.js";
import { contractTemplate } from "../support/docx-templates.js";
import { pdfText } from "../support/pdf-tools.js";
import { codeIn } from "../support/key-flow.js";
import { startPlatform, type Platform } from "../support/platform.js";
import { waitFor } from "../support/wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CORPUS_SAMPLE = ["10-pages.docx", "word_tables.docx", "bookmarks.docx", "header_footer.docx", "footnote.docx", "heading123.docx", "3-pages.docx", "table.docx"];

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the package's bin with ARGS in the checkout: through `npx docservice`
 * as docs/cli.md says, or (`direct`) as the bin itself, so that a signal
 * reaches the CLI and not npm; `whileRunning` may act on the process.
 */
function docservice(args: string[], env: Record<string, string>, options: { direct?: boolean; whileRunning?: (child: ReturnType<typeof spawn>) => void } = {}): Promise<CliRun> {
  const [command, prefix] = options.direct ? [join(ROOT, "bin/docservice.mjs"), []] : ["npx", ["--no-install", "docservice"]];
  const child = spawn(command, [...prefix, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  options.whileRunning?.(child);
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => statSync(join(dir, name)).isFile())
    .sort();
}

describe("the docservice CLI against embedded mode", () => {
  let platform: Platform;
  let scratch: string;
  let env: Record<string, string>;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "docservice-cli-"));
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "2" });
    // a tree: folders, a Markdown file, and a file that is not what its name says
    const input = join(scratch, "in");
    for (const [i, name] of CORPUS_SAMPLE.entries()) {
      const folder = join(input, i % 2 === 0 ? "contracts" : "contracts/annex");
      mkdirSync(folder, { recursive: true });
      copyFileSync(corpusPath(name), join(folder, name));
    }
    writeFileSync(join(input, "notes.md"), "# Notes\n\n| item | count |\n|---|---|\n| pens | 3 |\n");
    writeFileSync(join(input, "contracts", "not-a-word-file.docx"), "%PDF-1.7 this is not a DOCX");
  });

  after(async () => {
    await platform?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("keys register and verify: the code from the e-mail gives the API key, printed on stdout", async () => {
    const url = { DOCSERVICE_URL: platform.base };
    const registered = await docservice(["keys", "register", "--email", "cli@example.test"], url);
    assert.equal(registered.code, 0, registered.stderr);
    const outbox = join(platform.dataDir, "outbox");
    const mail = readFileSync(join(outbox, readdirSync(outbox).sort().at(-1)!), "utf8").replace(/=\n/g, "");
    const verified = await docservice(["keys", "verify", "--email", "cli@example.test", "--code", codeIn(mail)], url);
    assert.equal(verified.code, 0, verified.stderr);
    const apiKey = verified.stdout.trim();
    assert.match(apiKey, /^dsk_/);
    env = { DOCSERVICE_URL: platform.base, DOCSERVICE_API_KEY: apiKey };

    const wrong = await docservice(["keys", "verify", "--email", "cli@example.test", "--code", "000000"], url);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /docservice: 40\d/);
  });

  test("convert a folder: the tree mirrored under --out, the bad file reported with its reason, exit code 1, the rest done", async () => {
    // the default concurrency comes from here
    const health = (await (await fetch(`${platform.base}/v1/health`)).json()) as { capacity: object };
    assert.deepEqual(health.capacity, { sign: availableParallelism(), convert: 2 });
    const out = join(scratch, "pdf");
    const run = await docservice(["convert", join(scratch, "in"), "--out", out], env);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /FAILED .*not-a-word-file\.docx: 415 UNSUPPORTED_MEDIA_TYPE: The file is a PDF document/);
    assert.match(run.stderr, /9 done, 1 failed, 0 skipped/);
    const expected = [...CORPUS_SAMPLE.map((name, i) => `${i % 2 === 0 ? "contracts" : "contracts/annex"}/${name.replace(/\.docx$/, ".pdf")}`), "notes.pdf"].sort();
    assert.deepEqual(filesUnder(out), expected);
    for (const file of expected) assert.equal(readFileSync(join(out, file)).subarray(0, 5).toString(), "%PDF-", file);

    const again = await docservice(["convert", join(scratch, "in"), "--out", out], env);
    assert.match(again.stderr, /9 file\(s\) already up to date, skipped/);
    assert.equal(again.code, 1, "the bad file still fails");
  });

  test("an interrupted run (SIGINT) resumes: the second run does only what the first did not", async () => {
    const out = join(scratch, "pdfa");
    const first = await docservice(["convert", join(scratch, "in", "contracts"), "--out", out, "--pdfa", "2b", "--concurrency", "1"], env, {
      direct: true,
      whileRunning: (child) => void waitFor(async () => filesUnder(out).length >= 2, { what: "two outputs", timeoutMs: 60_000 }).then(() => child.kill("SIGINT")),
    });
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /interrupted: \d+ file\(s\) not started/);
    const done = filesUnder(out);
    assert.ok(done.length >= 2 && done.length < CORPUS_SAMPLE.length, `${done.length} outputs after the interruption`);
    assert.ok(done.every((name) => !name.endsWith(".docservice-partial")), "a partial output was left behind");
    const writtenAt = new Map(done.map((name) => [name, statSync(join(out, name)).mtimeMs]));

    const second = await docservice(["convert", join(scratch, "in", "contracts"), "--out", out, "--pdfa", "2b"], env);
    assert.match(second.stderr, new RegExp(`${done.length} file\\(s\\) already up to date, skipped`));
    assert.equal(filesUnder(out).length, CORPUS_SAMPLE.length);
    for (const [name, mtime] of writtenAt) assert.equal(statSync(join(out, name)).mtimeMs, mtime, `${name} was converted again`);
  });

  test("sign a folder, then verify the signed files; an unsigned PDF fails verification", async () => {
    const signed = join(scratch, "signed");
    const sign = await docservice(["sign", join(scratch, "pdf", "contracts", "annex"), "--out", signed, "--signer-name", "Jane Doe", "--signer-email", "jane@example.test"], env);
    assert.equal(sign.code, 0, sign.stderr);
    const signedFiles = filesUnder(signed);
    assert.deepEqual(signedFiles, CORPUS_SAMPLE.filter((_, i) => i % 2 === 1).map((name) => name.replace(/\.docx$/, ".signed.pdf")).sort());

    const verify = await docservice(["verify", signed], env);
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal((verify.stderr.match(/^ok +.*valid: Jane Doe/gm) ?? []).length, signedFiles.length, verify.stderr);
    const report = JSON.parse(readFileSync(join(signed, signedFiles[0].replace(/\.pdf$/, ".verify.json")), "utf8"));
    assert.equal(report.valid, true);

    const unsigned = await docservice(["verify", join(scratch, "pdf", "notes.pdf"), "--out", join(scratch, "reports")], env);
    assert.equal(unsigned.code, 1);
    assert.match(unsigned.stderr, /FAILED .*notes\.pdf: not valid/);
  });

  test("a signing stopped after the platform signed resumes with the same request: the document signed then, not a second signing", async () => {
    const input = join(scratch, "pdf", "notes.pdf");
    const out = join(scratch, "resumed");
    const output = join(out, "notes.signed.pdf");
    const flags = ["--out", out, "--signer-name", "Jane Doe", "--signer-email", "jane@example.test"];
    // a folder where the result goes: the platform signs, the result cannot be written
    mkdirSync(output, { recursive: true });
    const stopped = await docservice(["sign", input, ...flags, "--force"], env);
    assert.equal(stopped.code, 1, stopped.stderr);
    const claimFile = join(out, ".notes.signed.pdf.signing.json");
    const claim = JSON.parse(readFileSync(claimFile, "utf8")) as { eventId: string; submittedAt: string };

    rmSync(output, { recursive: true });
    const resumed = await docservice(["sign", input, ...flags], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(existsSync(claimFile), false, "the claim is released once the result is written");
    assert.ok((await pdfText(output)).replace(/\s+/g, "").includes(claim.eventId), "the certificate page names the stopped run's eventId");
    // the same request again is the platform's stored document, byte for byte: it was signed once
    const replay = await fetch(`${platform.base}/v1/sign`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.DOCSERVICE_API_KEY}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        document: { base64: readFileSync(input).toString("base64") },
        signer: { name: "Jane Doe", email: "jane@example.test" },
        certificate: { enabled: true },
        auditTrail: [{ type: "submit", timestamp: claim.submittedAt }],
        eventId: claim.eventId,
      }),
    });
    assert.equal(replay.status, 200);
    const stored = Buffer.from(((await replay.json()) as { document: { base64: string } }).document.base64, "base64");
    assert.ok(stored.equals(readFileSync(output)));
  });

  test("annotate a folder of templates with one fields file; a newer fields file makes them out of date", async () => {
    const templates = join(scratch, "templates");
    mkdirSync(join(templates, "sub"), { recursive: true });
    writeFileSync(join(templates, "a.docx"), contractTemplate());
    writeFileSync(join(templates, "sub", "b.docx"), contractTemplate());
    const fields = join(scratch, "fields.json");
    writeFileSync(fields, JSON.stringify([{ id: "customer", type: "text", value: "Grace Hopper" }, { group: "place", type: "text", value: "Arlington" }]));
    const out = join(scratch, "filled");
    const args = ["annotate", templates, "--fields", fields, "--to", "pdf", "--out", out];
    const run = await docservice(args, env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(filesUnder(out), ["a.filled.pdf", "sub/b.filled.pdf"]);
    const text = await pdfText(join(out, "sub/b.filled.pdf"));
    assert.match(text, /Grace Hopper/);
    assert.match(text, /Arlington/);

    assert.match((await docservice(args, env)).stderr, /2 file\(s\) already up to date, skipped/);
    const later = new Date(Date.now() + 5000);
    utimesSync(fields, later, later);
    assert.match((await docservice(args, env)).stderr, /2 done, 0 failed, 0 skipped/);

    writeFileSync(fields, "[{ not json");
    const broken = await docservice(args, env);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /docservice: --fields .*fields\.json: /);
  });

  test("on a terminal, a progress bar with rate and ETA", async () => {
    const out = join(scratch, "docx");
    const command = ["npx", "--no-install", "docservice", "convert", join(scratch, "in", "notes.md"), "--to", "docx", "--out", out].join(" ");
    // script(1) gives the command a pseudo-terminal
    const run = await new Promise<CliRun>((resolve) => {
      const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.once("exit", (code) => resolve({ code, stdout, stderr: "" }));
    });
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /1\/1 files \| [\d.]+\/s \| ETA/);
    assert.deepEqual(filesUnder(out).map((name) => relative(".", name)), ["notes.docx"]);
  });
});
