/**
 * The documentation as a newcomer meets it: every shell example of README.md,
 * docs/ and the other READMEs (packages, chart, load tests, benchmarks) runs,
 * every link inside the repository leads somewhere, and the README stays short.
 *
 * Every ```sh (or bash, shell) block runs as printed, under
 * `bash -c 'set -euo pipefail; …'`, against one embedded platform this test
 * starts (test/support/platform.ts), and must exit 0 and print what it shows
 * under its commands (test/support/example-output.ts). What an example may
 * count on, as a reader who ran `npm start` in the checkout has it:
 *
 * - `http://localhost:8080`, the docs' base URL: the test replaces it in the
 *   example's text with the platform's own (a free port on 127.0.0.1, since
 *   8080 may be taken on a shared machine).
 * - `$KEY`: an API key, new for each example that uses one (it may revoke
 *   it), issued through register → the outbox e-mail → verify before the
 *   example runs; `$DOCSERVICE_ADMIN_TOKEN`: the platform's admin token.
 * - A copy of the checkout's `examples/` per page, where its examples run in
 *   order (one may use what an earlier one wrote): the sample documents the
 *   pages use, exactly as a reader finds them. Beside it, as in the checkout,
 *   `.data` (the platform's data directory, as `npm start` makes it: the
 *   outbox is `../.data/outbox/`) and `node_modules/.bin/docservice` (this
 *   checkout's bin, so `npx docservice` runs it as in the checkout, and on
 *   PATH, so `docservice` runs it as a global install; npm is kept offline).
 * - The platform runs as `npm start` runs it, and also with the test PKI's
 *   signing key and chain, its root as trust anchor, its TSA with
 *   SIGNING_LEVEL=B-B (a request that names no level is signed as without a
 *   TSA; one that names B-LT or B-LTA gets it), its OCSP responders on loopback
 *   allowed (DOCUMENT_FETCH_ALLOW_HOSTS), and the register and verify rate
 *   limits lifted (every request comes from 127.0.0.1).
 * - `curl` is the real one, run with a `--write-out` that reports each
 *   answer's status on stderr, so an example fails on an error status it does
 *   not show.
 *
 * A block that cannot run here (a cluster, an image build, an HSM, `npm start`
 * itself) says why in its info string, ```sh not-run: REASON, and a test file
 * the reason names must exist.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { outputProblems, shownOutputs } from "./support/example-output.js";
import { codeBlocks, headingAnchors, markdownFilesUnder, relativeLinks, type CodeBlock } from "./support/markdown.js";
import { startPkiPlatform, type PkiPlatform } from "./support/pki-platform.js";
import { issueKeyFromOutbox, type Platform } from "./support/platform.js";
import { runCommand } from "./support/run-command.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DOCS_BASE_URL = "http://localhost:8080";
const ADMIN_TOKEN = "docs-examples-admin-token";
const SHELLS = new Set(["sh", "bash", "shell"]);
const STATUS_LINE = /\ndocs-example-status (\d{3})\n/g;

const readmesUnder = (dir: string) =>
  readdirSync(join(ROOT, dir))
    .map((name) => join(dir, name, "README.md"))
    .filter((path) => existsSync(join(ROOT, path)));

// every page a reader follows: the README, docs/, the sample documents' page, and the READMEs of the packages, the chart, the load tests and the benchmarks
const EXAMPLE_PAGES = ["README.md", ...markdownFilesUnder(ROOT, "docs"), "examples/README.md", ...readmesUnder("clients"), ...readmesUnder("charts"), "loadtest/README.md", "bench/README.md"];
const LINKING_PAGES = [...EXAMPLE_PAGES, "CHANGELOG.md"];
const examples = EXAMPLE_PAGES.flatMap((file) => codeBlocks(ROOT, file)).filter((block) => SHELLS.has(block.language));
const notRunReason = (block: CodeBlock) => /^not-run:\s*(.*)$/.exec(block.attributes)?.[1];
const where = (block: CodeBlock) => `${block.file}:${block.line}`;

test("every shell example runs, or says in its info string why it cannot", () => {
  assert.ok(examples.length > 0);
  for (const block of examples) {
    const reason = notRunReason(block);
    assert.ok(block.attributes === "" || reason, `${where(block)}: the info string after ${block.language} is "not-run: REASON" or nothing, not "${block.attributes}"`);
    if (reason === undefined) continue;
    assert.ok(reason.trim().length > 0, `${where(block)}: not-run needs a reason`);
    for (const [testFile] of reason.matchAll(/[\w./-]+\.test\.ts/g)) assert.ok(existsSync(join(ROOT, testFile)), `${where(block)}: ${testFile} does not exist`);
  }
});

describe("shell examples against one embedded platform", { timeout: 600_000 }, () => {
  let started: PkiPlatform;
  let platform: Platform;
  let scratch: string;
  let curlDir: string;
  const workdirs = new Map<string, string>();
  let keysIssued = 0;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "docservice-docs-examples-"));
    curlDir = join(scratch, "bin");
    mkdirSync(curlDir);
    const realCurl = execFileSync("bash", ["-c", "command -v curl"], { encoding: "utf8" }).trim();
    writeFileSync(join(curlDir, "curl"), `#!/usr/bin/env bash\nexec ${realCurl} --write-out '%{stderr}\\ndocs-example-status %{http_code}\\n' "$@"\n`);
    chmodSync(join(curlDir, "curl"), 0o755);
    started = await startPkiPlatform({
      DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGNING_LEVEL: "B-B",
      CONVERSION_POOL_SIZE: "1",
      RATE_LIMIT_REGISTER_PER_EMAIL: "1000/3600",
      RATE_LIMIT_REGISTER_PER_IP: "1000/3600",
      RATE_LIMIT_VERIFY_PER_EMAIL: "1000/900",
      RATE_LIMIT_VERIFY_PER_IP: "1000/900",
    });
    platform = started.platform;
  });

  after(async () => {
    await started?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** The page's copy of examples/, made on first use, with the checkout's `.data` and bin beside it. */
  function workdirOf(page: string): string {
    const existing = workdirs.get(page);
    if (existing) return existing;
    const checkout = join(scratch, page.replaceAll("/", "_"));
    mkdirSync(join(checkout, "node_modules/.bin"), { recursive: true });
    symlinkSync(platform.dataDir, join(checkout, ".data"));
    symlinkSync(join(ROOT, "bin/docservice.mjs"), join(checkout, "node_modules/.bin/docservice"));
    const dir = join(checkout, "examples");
    cpSync(join(ROOT, "examples"), dir, { recursive: true });
    workdirs.set(page, dir);
    return dir;
  }

  for (const block of examples.filter((example) => notRunReason(example) === undefined)) {
    test(where(block), async () => {
      const key = block.code.includes("$KEY") ? await issueKeyFromOutbox(platform, `example-${++keysIssued}@example.test`) : "";
      const script = `set -euo pipefail\n${block.code.replaceAll(DOCS_BASE_URL, platform.base)}`;
      const cwd = workdirOf(block.file);
      const { code, output } = await runCommand("bash", ["-c", script], {
        cwd,
        // the bin on PATH too: the package READMEs call `docservice` as a global install does
        env: { PATH: `${curlDir}:${join(cwd, "../node_modules/.bin")}:${process.env.PATH}`, KEY: key, DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN, npm_config_offline: "true", npm_config_update_notifier: "false" },
        timeoutMs: 120_000,
      });
      const statuses = [...output.matchAll(STATUS_LINE)].map((match) => Number(match[1]));
      const printed = output.replace(STATUS_LINE, "\n");
      assert.equal(code, 0, `${where(block)} exited with ${code}:\n${printed}`);
      assert.deepEqual(outputProblems(shownOutputs(block.code, block.line + 1), printed, statuses), [], `${where(block)} printed:\n${printed}`);
    });
  }
});

test("every link inside the repository points to a file, and an #anchor to a heading of it", () => {
  const broken: string[] = [];
  for (const page of LINKING_PAGES) {
    for (const href of relativeLinks(readFileSync(join(ROOT, page), "utf8"))) {
      const [path, anchor] = href.split("#");
      const target = path ? normalize(join(dirname(page), decodeURIComponent(path))) : page;
      if (!existsSync(join(ROOT, target))) broken.push(`${page}: ${href} (no ${target})`);
      else if (anchor && !(target.endsWith(".md") && headingAnchors(readFileSync(join(ROOT, target), "utf8")).has(decodeURIComponent(anchor)))) {
        broken.push(`${page}: ${href} (no heading #${anchor} in ${target})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test("a package's README and CHANGELOG link nowhere outside the package: its tarball carries them alone", () => {
  const leaving: string[] = [];
  for (const page of readdirSync(join(ROOT, "clients")).flatMap((name) => [`clients/${name}/README.md`, `clients/${name}/CHANGELOG.md`])) {
    if (!existsSync(join(ROOT, page))) continue;
    for (const href of relativeLinks(readFileSync(join(ROOT, page), "utf8"))) {
      const path = href.split("#")[0];
      if (path && normalize(join(dirname(page), decodeURIComponent(path))).split("/").slice(0, 2).join("/") !== dirname(page)) leaving.push(`${page}: ${href}`);
    }
  }
  assert.deepEqual(leaving, []);
});

test("README.md stays short: at most 200 lines, none over 400 characters", () => {
  const lines = readFileSync(join(ROOT, "README.md"), "utf8").trimEnd().split("\n");
  assert.ok(lines.length <= 200, `README.md has ${lines.length} lines; move detail to docs/`);
  const long = lines.flatMap((line, i) => (line.length > 400 ? [`line ${i + 1}: ${line.length} characters`] : []));
  assert.deepEqual(long, []);
});
