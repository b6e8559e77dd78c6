// The release's own checks: one version everywhere (scripts/release-check.ts)
// and the licenses of what ships (scripts/third-party-licenses.ts). npm test
// runs both commands on the checkout; here, that each one catches what it is
// there to catch.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { disagreements, versionStatements } from "../scripts/release-check.js";
import { dependencyClosure, licenseProblem, noticesText, shippedPackages, type ShippedPackage } from "../scripts/third-party-licenses.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("release:check", () => {
  const copy = mkdtempSync(join(tmpdir(), "docservice-release-check-"));
  after(() => rmSync(copy, { recursive: true, force: true }));
  for (const path of ["package.json", "package-lock.json", "README.md", "docs", "clients", "charts/docservice-operator/Chart.yaml", "operator/examples", "Containerfile", "CHANGELOG.md"]) {
    cpSync(join(ROOT, path), join(copy, path), { recursive: true, filter: (source) => !source.includes("node_modules") && !source.includes("/dist") });
  }
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

  test("the checkout states one version in every place, the changelog's newest release included", () => {
    const statements = versionStatements(ROOT);
    assert.ok(statements.length >= 10, `${statements.length} places`);
    assert.deepEqual(disagreements(statements), []);
    assert.ok(statements.some((s) => s.place === "CHANGELOG.md newest release" && s.version === version));
  });

  test("a chart, a package, its README or a changelog left behind is named", () => {
    const edit = (path: string, from: RegExp, to: string) => writeFileSync(join(copy, path), readFileSync(join(copy, path), "utf8").replace(from, to));
    assert.deepEqual(disagreements(versionStatements(copy)), []);
    edit("charts/docservice-operator/Chart.yaml", /^appVersion: .*$/m, 'appVersion: "0.0.9"');
    edit("clients/telemetry/package.json", /"version": "[^"]+"/, '"version": "9.9.9"');
    edit("clients/telemetry/README.md", /docservice-telemetry-[^/\s]+\.tgz/g, "docservice-telemetry-0.0.5.tgz");
    edit("docs/client-libraries.md", /docservice-cli-[^/\s]+\.tgz/g, "docservice-cli-0.0.6.tgz");
    edit("CHANGELOG.md", /^## \[[^\]]+\] - /m, "## [Unreleased]\n\n## [0.0.1] - ");
    assert.deepEqual(
      disagreements(versionStatements(copy)).map((s) => `${s.place} ${s.version}`),
      [
        "clients/telemetry/package.json version 9.9.9",
        "docs/client-libraries.md tarball name 0.0.6",
        "clients/telemetry/README.md tarball name 0.0.5",
        "clients/telemetry/README.md tarball name 0.0.5",
        "charts/docservice-operator/Chart.yaml appVersion 0.0.9",
        "CHANGELOG.md newest release 0.0.1",
      ],
    );
  });
});

describe("third-party licenses", () => {
  const pkg = (license: string): ShippedPackage => ({ id: "example@1.0.0", license, licenseText: "Permission is hereby granted" });

  test("permissive, weak-copyleft and GPL-3.0 terms may ship; proprietary, SSPL, GPL-2.0-only and guesses may not", () => {
    for (const license of ["MIT", "(BSD-3-Clause OR GPL-2.0)", "(MIT AND Zlib)", "Apache-2.0 AND BSD-3-Clause", "MPL-2.0", "GPL-3.0-or-later", "AGPL-3.0-only"]) {
      assert.equal(licenseProblem(pkg(license)), undefined, license);
    }
    assert.match(licenseProblem(pkg("MIT AND SSPL-1.0"))!, /cannot be combined with AGPL-3.0-only/);
    assert.match(licenseProblem(pkg("GPL-2.0-only"))!, /cannot be combined/);
    assert.match(licenseProblem(pkg("UNLICENSED"))!, /not an SPDX expression/);
    assert.match(licenseProblem(pkg("UNKNOWN"))!, /not an SPDX expression/);
    assert.match(licenseProblem(pkg("MIT*"))!, /guessed/);
  });

  test("a package without a license file gets its license's standard text in the notices, marked as such", () => {
    const bare = { ...pkg("(MIT AND Zlib)"), licenseText: undefined };
    assert.equal(licenseProblem(bare), undefined);
    const notices = noticesText("title", [bare]);
    assert.match(notices, /example@1\.0\.0\nLicense: \(MIT AND Zlib\)\n\nThe package ships no license file; the standard text of MIT and Zlib follows\./);
    assert.match(notices, /Permission is hereby granted, free of charge/);
    assert.match(notices, /This software is provided 'as-is', without any express or implied/);
  });

  test("the checkout's production dependencies, read from node_modules, all may ship, and the notices carry each one's text", async () => {
    const shipped = await shippedPackages(ROOT);
    assert.ok(shipped.length > 100, `${shipped.length} packages`);
    assert.ok(!shipped.some((p) => p.id.startsWith("typescript@") || p.id.startsWith("fast-check@")), "devDependencies are not shipped");
    assert.deepEqual(shipped.map((p) => [p.id, licenseProblem(p)]).filter(([, problem]) => problem), []);
    const notices = noticesText("title", shipped);
    const zod = shipped.find((p) => p.id.startsWith("zod@"))!;
    assert.ok(notices.includes(`${zod.id}\nLicense: MIT\n`) && notices.includes(zod.licenseText!.trim()));
  });

  test("the telemetry package's dependencies are all among them", async () => {
    const closure = dependencyClosure(join(ROOT, "clients/telemetry"));
    const fflate = JSON.parse(readFileSync(join(ROOT, "node_modules/fflate/package.json"), "utf8")).version;
    assert.deepEqual([...closure], [`fflate@${fflate}`]);
  });
});
