import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { call } from "../support/key-flow.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { issueKeyFromOutbox } from "../support/platform.js";
import { freePort } from "../support/ports.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";
import { waitFor } from "../support/wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * What an image runs: `npm run build`'s output started with plain node. The app
 * directory holds the build and a node_modules with every package but tsx, so
 * any use of tsx (a loader, a worker bootstrap) fails to resolve. Node's
 * permission model lets the process write only to its data directory and a
 * temp directory (for LibreOffice, a child process): a read-only root
 * filesystem, where a tsx compile cache or anything else written beside the
 * code would fail.
 */
describe("compiled build (npm run build, plain node, no tsx, writes only to the data dir)", () => {
  let work: string;
  let app: string;
  let dataDir: string;
  let scratch: string;
  let base: string;
  let child: ChildProcess | undefined;
  let output = "";

  /** Node with the permission model: reads anywhere, writes only to `writable`. */
  const confinedNode = (writable: string[]) => [
    "--permission",
    "--allow-fs-read=*",
    ...writable.map((dir) => `--allow-fs-write=${dir}`),
    "--allow-addons", // lmdb, msgpackr-extract, pkcs11js
    "--allow-worker", // signing workers, the telemetry thread
    "--allow-child-process", // LibreOffice (unoserver)
  ];
  const cleanEnv = (): NodeJS.ProcessEnv => {
    const env = { ...process.env };
    // The test runner's own loader and context must not reach the platform.
    delete env.NODE_OPTIONS;
    delete env.NODE_TEST_CONTEXT;
    return env;
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "docservice-compiled-"));
    app = join(work, "app");
    dataDir = join(work, "data");
    scratch = join(work, "tmp");
    for (const dir of [app, dataDir, scratch]) mkdirSync(dir);

    // `npm run build -- <dir>` is ensure-deps.sh (done by the test run) and then this.
    const built = spawnSync(process.execPath, ["scripts/build.mjs", join(app, "dist")], { cwd: ROOT, encoding: "utf8", env: cleanEnv() });
    assert.equal(built.status, 0, `build failed:\n${built.stdout}${built.stderr}`);

    mkdirSync(join(app, "node_modules"));
    for (const name of readdirSync(join(ROOT, "node_modules"))) {
      if (name === "tsx" || name.startsWith(".")) continue;
      symlinkSync(join(ROOT, "node_modules", name), join(app, "node_modules", name));
    }
  });

  after(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the build mirrors the sources as JavaScript, with no TypeScript and no tsx bootstrap", () => {
    const dist = join(app, "dist");
    for (const file of ["services/main.js", "operator/main.js", "services/signing/workers/signing-worker.js", "services/telemetry/kafka/kafka-thread.js", "services/conversion/sanitizer-worker.js", "loadtest/sizing-profile.json"]) {
      assert.ok(existsSync(join(dist, file)), `${file} in the build`);
    }
    const files = (readdirSync(dist, { recursive: true }) as string[]).filter((file) => !file.endsWith(".map"));
    assert.deepEqual(files.filter((file) => /\.(ts|mts|mjs)$/.test(file) || file.includes(".test.")), []);
    const manifest = JSON.parse(readFileSync(join(dist, "package.json"), "utf8"));
    assert.equal(manifest.type, "module");
    assert.equal(manifest.version, JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
    // The check below means something: tsx cannot be loaded from the app directory.
    const probe = spawnSync(process.execPath, ["--input-type=module", "-e", "await import('tsx/esm/api')"], { cwd: join(app, "dist"), encoding: "utf8", env: cleanEnv() });
    assert.notEqual(probe.status, 0);
    assert.match(probe.stderr, /ERR_MODULE_NOT_FOUND/);
  });

  test("node dist/services/main.js all serves health, keys, signing and conversion", async () => {
    base = `http://127.0.0.1:${await freePort()}`;
    child = spawn(process.execPath, [...confinedNode([dataDir, scratch]), join(app, "dist/services/main.js"), "all"], {
      cwd: app,
      env: {
        ...cleanEnv(),
        TMPDIR: scratch,
        HOST: "127.0.0.1",
        PORT: new URL(base).port,
        GRPC_PORT: "0",
        DOCSERVICE_DATA_DIR: dataDir,
        CONVERSION_POOL_SIZE: "1",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    await waitFor(
      async () => {
        if (child!.exitCode !== null) throw new Error(`the compiled platform exited with ${child!.exitCode}:\n${output}`);
        try {
          return (await fetch(`${base}/v1/health`)).status === 200;
        } catch {
          return false;
        }
      },
      { what: "the compiled platform to answer /v1/health", timeoutMs: 60_000 },
    );

    const health = await call(base, "/v1/health");
    assert.equal(health.status, 200);
    assert.equal(health.body.status, "ok", JSON.stringify(health.body));
    // the API reference page's renderer, found in the build's own copy (dist/node_modules/redoc), not the checkout's
    const renderer = await fetch(`${base}/docs/redoc.standalone.js`);
    assert.equal(renderer.status, 200);
    assert.deepEqual(Buffer.from(await renderer.arrayBuffer()), readFileSync(join(app, "dist/node_modules/redoc/bundles/redoc.standalone.js")));

    const apiKey = await issueKeyFromOutbox({ base, dataDir }, "compiled@example.test");
    assert.match(apiKey, /^dsk_/);
    const info = await call(base, "/v1/auth/key", { apiKey });
    assert.equal(info.status, 200);

    // Signing runs in the worker threads: compiled, they load signing-worker.js directly.
    const signed = signedPdfOf(await postJson(base, "/v1/sign", signBody(await textPdf(1)), apiKey));
    assert.equal(signed.subarray(0, 5).toString("latin1"), "%PDF-");
    assert.match(signed.toString("latin1"), /\/ByteRange\s*\[/);

    // HTML is sanitized on a worker thread before LibreOffice sees it: compiled, it loads sanitizer-worker.js directly.
    const form = new FormData();
    form.append("file", new Blob(["<html><body><h1>Compiled build</h1><p>Converted from HTML.</p></body></html>"]), "page.html");
    const converted = await fetch(`${base}/v1/convert?from=html`, { method: "POST", body: form, headers: { Authorization: `Bearer ${apiKey}` } });
    const pdf = Buffer.from(await converted.arrayBuffer());
    assert.equal(converted.status, 200, pdf.toString("utf8").slice(0, 500));
    assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-");

    assert.doesNotMatch(output, /ERR_ACCESS_DENIED|ERR_MODULE_NOT_FOUND/);
    child.kill("SIGTERM");
    const code = await new Promise((resolve) => (child!.exitCode !== null ? resolve(child!.exitCode) : child!.once("exit", resolve)));
    assert.equal(code, 0, output);
    // Nothing landed in the app directory.
    assert.deepEqual(readdirSync(app).sort(), ["dist", "node_modules"]);
  });

  test("node dist/operator/main.js starts (no cluster here: it only has to load and begin)", async () => {
    const kubeconfig = join(work, "kubeconfig");
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`,
    );
    const operator = spawn(process.execPath, [...confinedNode([]), join(app, "dist/operator/main.js")], {
      cwd: app,
      env: { ...cleanEnv(), KUBECONFIG: kubeconfig, POD_NAME: "compiled-test" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    operator.stdout!.on("data", (chunk) => (log += chunk));
    operator.stderr!.on("data", (chunk) => (log += chunk));
    try {
      await waitFor(
        async () => {
          if (operator.exitCode !== null) throw new Error(`the compiled operator exited with ${operator.exitCode}:\n${log}`);
          return log.includes('"message":"operator started"');
        },
        { what: "the compiled operator to start", timeoutMs: 60_000 },
      );
    } finally {
      operator.kill("SIGKILL");
    }
    assert.doesNotMatch(log, /ERR_ACCESS_DENIED|ERR_MODULE_NOT_FOUND/);
  });
});
