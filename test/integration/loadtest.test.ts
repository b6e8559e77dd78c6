// The k6 load tests (loadtest/): the short CI run against embedded mode passes,
// an impossible p95 target makes it fail (so a breach really fails CI), the k6
// commands loadtest/README.md shows load the scenarios they mean, and the
// committed sizing profile is what the operator expects.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { COMPONENTS } from "../../operator/crd.js";
import { CLUSTER_SIZINGS } from "../../loadtest/scenarios.js";
import type { SizingProfile } from "../../operator/sizing.js";
import { cacheBin } from "../support/cache.js";
import { corpusFile } from "../support/corpus.js";
import { codeBlocks } from "../support/markdown.js";
import { runCommand } from "../support/run-command.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** `loadtest/run.ts check` in its own process; SIGTERM (it then stops its platform) past the timeout. */
function runCheck(env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return runCommand(process.execPath, ["--import", "tsx", "loadtest/run.ts", "check"], { cwd: ROOT, env, timeoutMs });
}

describe("k6 load tests against embedded mode", () => {
  test("every scenario holds its thresholds at the check rate", { timeout: 120_000 }, async () => {
    const { code, output } = await runCheck({}, 110_000);
    assert.equal(code, 0, output);
    assert.match(output, /check passed/);
    for (const scenario of ["collect", "collect-10", "sign", "convert", "register", "verify", "grpc-telemetry-collect", "grpc-signing-verification-key", "grpc-keys-authenticate"]) {
      assert.match(output, new RegExp(`^${scenario} .* ok$`, "m"), `${scenario} ran and held:\n${output}`);
    }
  });

  test("a crossed threshold fails the run", { timeout: 90_000 }, async () => {
    const { code, output } = await runCheck({ LOADTEST_P95_MS: "0.001", LOADTEST_SCENARIOS: "collect,grpc-keys-authenticate" }, 80_000);
    assert.equal(code, 1, output);
    assert.match(output, /^collect .* THRESHOLD CROSSED: http_req_duration p\(95\)<0\.001 /m);
    assert.match(output, /^grpc-keys-authenticate .* THRESHOLD CROSSED: grpc_req_duration p\(95\)<0\.001 /m);
    assert.match(output, /check FAILED \(collect, grpc-keys-authenticate\)/);
  });
});

// The README's k6 commands drive a platform for minutes (so the docs test does not run them): here each one runs as printed,
// with `k6 run` made `k6 inspect`, which loads the script with its variables and prints the scenarios it would run.
test("the k6 commands of loadtest/README.md load the scenarios their variables ask for", async () => {
  const commands = codeBlocks(ROOT, "loadtest/README.md").flatMap((block) => block.code.split("\n").filter((line) => line.startsWith("k6 run ")));
  assert.ok(commands.length >= 3, `k6 commands in loadtest/README.md: ${commands.length}`);
  const dir = mkdtempSync(join(tmpdir(), "docservice-loadtest-readme-"));
  try {
    // the reader's working directory: the checkout's loadtest/ and proto/ (the gRPC scenarios load it), and the files the commands name
    for (const sub of ["loadtest", "proto"]) symlinkSync(join(ROOT, sub), join(dir, sub));
    writeFileSync(join(dir, "contract.pdf"), "%PDF-1.4\n");
    writeFileSync(join(dir, "letter.docx"), corpusFile("bookmarks.docx"));
    for (const command of commands) {
      const script = `set -euo pipefail\nk6() { shift; "$K6" inspect "$@"; }\n${command}`;
      const { code, output } = await runCommand("bash", ["-c", script], { cwd: dir, env: { K6: cacheBin("k6"), KEY: "dsk_example" }, timeoutMs: 60_000 });
      assert.equal(code, 0, `${command}\n${output}`);
      const scenarios = (JSON.parse(output.slice(output.indexOf("{"))) as { scenarios: Record<string, { executor: string }> }).scenarios;
      // ramp.js: a scenario per route the command gives stages, `<route>` for a rate, `<route>_users` for users
      const staged = [...command.matchAll(/-e ([A-Z]+)_(USER_)?STAGES=/g)].map(([, route, users]) => `${route!.toLowerCase()}${users ? "_users" : ""}`);
      if (staged.length > 0) {
        assert.deepEqual(Object.keys(scenarios).sort(), staged.sort(), command);
        for (const name of staged) assert.equal(scenarios[name]!.executor, name.endsWith("_users") ? "ramping-vus" : "ramping-arrival-rate", `${command}: ${name}`);
      } else {
        assert.deepEqual(Object.values(scenarios).map((scenario) => scenario.executor), ["constant-arrival-rate"], command);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the committed sizing profile has a measured capacity for every component", () => {
  const profile = JSON.parse(readFileSync(new URL("../../loadtest/sizing-profile.json", import.meta.url), "utf8")) as SizingProfile;
  assert.deepEqual(Object.keys(profile).sort(), ["components", "measuredAt", "method"]);
  assert.ok(!Number.isNaN(Date.parse(profile.measuredAt)) && new Date(profile.measuredAt).toISOString() === profile.measuredAt, profile.measuredAt);
  // measured per pod on the node, under Node 24 (loadtest/cluster-target.ts)
  assert.match(profile.method, /npm run loadtest:size -- --cluster/);
  assert.match(profile.method, /k6 v\d+\.\d+\.\d+/);
  assert.match(profile.method, /Node v24\./);
  assert.match(profile.method, /one pod of each component on a real single-node Kubernetes cluster/);
  assert.deepEqual(Object.keys(profile.components).sort(), [...COMPONENTS].sort());
  for (const component of COMPONENTS) {
    const capacity = profile.components[component]!;
    // the units per request where a request carries more than one (the aggregator's events per report: KEDA's lag threshold divides by it)
    const { unitsPerRequest } = CLUSTER_SIZINGS.find((sizing) => sizing.component === component)!;
    const fields = ["cpuPercentAtCapacity", "memoryMiBAtCapacity", "p95TargetMs", "requestsPerSecond", "route", ...(unitsPerRequest === 1 ? [] : ["unitsPerRequest"])];
    assert.deepEqual(Object.keys(capacity).sort(), fields.sort(), component);
    assert.equal(capacity.unitsPerRequest ?? 1, unitsPerRequest, component);
    assert.ok(typeof capacity.route === "string" && capacity.route.length > 0, component);
    for (const field of ["requestsPerSecond", "p95TargetMs", "cpuPercentAtCapacity", "memoryMiBAtCapacity"] as const) {
      assert.ok(typeof capacity[field] === "number" && Number.isFinite(capacity[field]) && capacity[field] > 0, `${component}.${field} = ${capacity[field]}`);
    }
  }
});
