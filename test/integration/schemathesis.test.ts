import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cacheBin } from "../support/cache.js";
import { call } from "../support/key-flow.js";
import { runCommand } from "../support/run-command.js";
import { issueKeyFromOutbox, startPlatform, type Platform } from "../support/platform.js";
import { startTestTsa, type TestTsa } from "../support/tsa.js";
import { waitFor } from "../support/wait.js";

/**
 * Schemathesis (PyPI, pinned in scripts/testenv/schemathesis-requirements.txt)
 * against the /openapi.json a live embedded platform serves: every operation,
 * generated valid and invalid requests, each answer checked against the
 * document. Gates: no 5xx, every status, content type, header and body as
 * documented, and the process still serving (and shutting down cleanly) at
 * the end.
 */

const HERE = fileURLToPath(new URL("./schemathesis/", import.meta.url));
const ADMIN_TOKEN = "schemathesis-admin-token-0123456789";
/** Per operation and phase (SCHEMATHESIS_MAX_EXAMPLES overrides): with the coverage phase about 6,000 requests, under a minute here. */
const MAX_EXAMPLES = Number(process.env.SCHEMATHESIS_MAX_EXAMPLES ?? 500);
/** Fixed, so a CI failure replays as it happened (`st replay <id>` or the same command). */
const SEED = 20261125;
const CHECKS = [
  "not_a_server_error",
  "status_code_conformance",
  "content_type_conformance",
  "response_headers_conformance",
  "response_schema_conformance",
];
/** A guard against a hung run, not a speed goal: on one of the 2-core machines CI has run on, the run took over 4 minutes. */
const RUN_TIMEOUT_MS = 8 * 60_000;

interface Interaction {
  request: { method: string; uri: string };
  response?: { status_code: number } | null;
}

interface Check {
  name: string;
  status: string;
  failure_info?: { failure: { operation: string; title: string; message: string } };
}

interface RunReport {
  operations: number;
  requests: number;
  /** "POST /v1/sign" → "400×312 422×40 …": how deep the generated requests got. */
  statuses: Map<string, Map<number, number>>;
  serverErrors: string[];
  failures: string[];
}

/** What the NDJSON event stream of a run says: operations, every request sent, 5xx answers and failed checks (unique). */
function readReport(file: string): RunReport {
  let operations = 0;
  let requests = 0;
  const serverErrors: string[] = [];
  const failures = new Set<string>();
  const statuses = new Map<string, Map<number, number>>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const event = JSON.parse(line) as Record<string, any>;
    if (event.LoadingFinished) operations = event.LoadingFinished.statistic.operations.selected;
    const recorder = event.ScenarioFinished?.recorder;
    if (!recorder) continue;
    for (const interaction of Object.values(recorder.interactions ?? {}) as Interaction[]) {
      requests++;
      const status = interaction.response?.status_code ?? 0;
      const counts = statuses.get(recorder.label) ?? statuses.set(recorder.label, new Map()).get(recorder.label)!;
      counts.set(status, (counts.get(status) ?? 0) + 1);
      if (status >= 500) serverErrors.push(`${status} ${interaction.request.method} ${interaction.request.uri}`);
    }
    for (const checks of Object.values(recorder.checks ?? {}) as Check[][]) {
      for (const check of checks) {
        const failure = check.failure_info?.failure;
        if (check.status !== "success" && failure) failures.add(`${failure.operation}: ${check.name}: ${failure.title} (${failure.message.replace(/\s+/g, " ")})`);
      }
    }
  }
  return { operations, requests, statuses, serverErrors, failures: [...failures] };
}

describe("Schemathesis against the served /openapi.json", { timeout: RUN_TIMEOUT_MS + 120_000 }, () => {
  let platform: Platform;
  let tsa: TestTsa;
  let scratch: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "docservice-schemathesis-"));
    // a TSA, so that /v1/timestamp and sign requests naming B-T are served; unnamed levels stay B-B
    tsa = await startTestTsa();
    platform = await startPlatform({
      SIGNING_TSA_URL: tsa.url,
      SIGNING_LEVEL: "B-B",
      DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
      // Generated requests register and verify hundreds of addresses from one client.
      RATE_LIMIT_REGISTER_PER_EMAIL: "100000/3600",
      RATE_LIMIT_REGISTER_PER_IP: "100000/3600",
      RATE_LIMIT_VERIFY_PER_EMAIL: "100000/900",
      RATE_LIMIT_VERIFY_PER_IP: "100000/900",
      CONVERSION_POOL_SIZE: "1",
      SIGNING_WORKERS: "1",
      DOCUMENT_FETCH_TIMEOUT_MS: "2000",
    });
  });

  after(async () => {
    await platform?.stop();
    await tsa?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test("every operation: no 5xx, every answer as documented, still serving at the end", async (t) => {
    // /v1/health answers 503 until every backend (the LibreOffice pool too) is up: fuzz a platform that is all there.
    await waitFor(async () => (await call(platform.base, "/v1/health")).status === 200, { what: "every backend healthy", timeoutMs: 60_000, intervalMs: 250 });
    // DELETE /v1/auth/key revokes the key it is sent with: it gets one of its own (schemathesis.toml).
    const revokeKey = await issueKeyFromOutbox(platform, "revoke-me@example.test");
    const reportDir = join(scratch, "report");
    const args = [
      "--config-file", join(HERE, "schemathesis.toml"),
      "run", `${platform.base}/openapi.json`,
      "--checks", CHECKS.join(","),
      "--phases", "examples,coverage,fuzzing",
      "--max-examples", String(MAX_EXAMPLES),
      "--seed", String(SEED),
      "--workers", "1",
      "--request-timeout", "30",
      "--generation-database", "none",
      "--report", "ndjson",
      "--report-dir", reportDir,
      "--no-color",
    ];
    const { code, output } = await runCommand(cacheBin("schemathesis"), args, {
      env: {
        DOCSERVICE_API_KEY: platform.apiKey,
        DOCSERVICE_REVOKE_KEY: revokeKey,
        DOCSERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
        SCHEMATHESIS_HOOKS: join(HERE, "hooks.py"),
        PYTHONDONTWRITEBYTECODE: "1", // nothing written into the checkout
      },
      cwd: scratch,
      timeoutMs: RUN_TIMEOUT_MS,
    });

    const reports = readdirSync(reportDir).filter((name) => name.endsWith(".ndjson"));
    assert.equal(reports.length, 1, `no NDJSON report; schemathesis said:\n${output}`);
    const report = readReport(join(reportDir, reports[0]!));
    const generated = Number(/(\d+) generated/.exec(output)?.[1] ?? NaN);
    t.diagnostic(`schemathesis ${args.join(" ")}`);
    t.diagnostic(
      `operations: ${report.operations}, examples generated: ${generated}, requests sent: ${report.requests}, ` +
        `5xx: ${report.serverErrors.length}, failures: ${report.failures.length}`,
    );
    for (const [operation, counts] of [...report.statuses].sort()) {
      t.diagnostic(`${operation}: ${[...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(" ")}`);
    }
    for (const failure of report.failures) t.diagnostic(`failure: ${failure}`);

    assert.deepEqual(report.serverErrors, [], "no generated request may get a 5xx");
    assert.deepEqual(report.failures, [], `every answer matches /openapi.json; schemathesis said:\n${output}`);
    assert.equal(code, 0, `schemathesis exited ${code}:\n${output}`);
    const paths = ((await call(platform.base, "/openapi.json")).body as { paths: Record<string, object> }).paths;
    const documented = Object.values(paths).reduce((sum, operations) => sum + Object.keys(operations).length, 0);
    assert.equal(report.operations, documented, "every documented operation was tested");
    assert.ok(generated >= report.operations * 20, `examples generated: ${generated}`);

    // still serving: health, and the run's API key still works (only the revocation key was revoked)
    const health = await call(platform.base, "/v1/health");
    assert.equal(health.status, 200, JSON.stringify(health.body));
    assert.equal((await call(platform.base, "/v1/auth/key", { apiKey: platform.apiKey })).status, 200);
    assert.equal((await call(platform.base, "/v1/auth/key", { apiKey: revokeKey })).status, 401, "DELETE /v1/auth/key was exercised with its own key");

    // nothing unexpected in the log, and a clean shutdown
    const logged = platform.process.output();
    assert.doesNotMatch(logged, /unhandled|uncaught/i, "no error escaped a request");
    assert.equal(await platform.process.stop(), 0, `the platform did not exit cleanly:\n${logged.slice(-4000)}`);
  });
});
