/**
 * `npm run release:check`: every place that states DocService's version says
 * the same, the changelog's newest release included. The images' tags and
 * labels, `/v1/health` and `docservice --version` read the root package.json,
 * so they follow it; what is listed here is written by hand. Exit 1 on the
 * first disagreement, with every place's version printed.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { clientPackageDirs } from "./client-packages.js";

export interface VersionStatement {
  /** The file (relative to the checkout) and where in it. */
  place: string;
  /** The version it states, or undefined when it states none where one is expected. */
  version: string | undefined;
}

const SEMVER = /\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?/;

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");
const first = (text: string, pattern: RegExp) => pattern.exec(text)?.[1];

/** Every statement of the version in the checkout at `root`. */
export function versionStatements(root: string): VersionStatement[] {
  const statements: VersionStatement[] = [];
  const lock = JSON.parse(read(root, "package-lock.json")) as { version?: string; packages: Record<string, { version?: string }> };
  statements.push({ place: "package-lock.json version", version: lock.version }, { place: 'package-lock.json packages[""]', version: lock.packages[""]?.version });
  for (const path of ["package.json", ...clientPackageDirs(root).map((dir) => join(dir, "package.json"))]) {
    statements.push({ place: `${path} version`, version: (JSON.parse(read(root, path)) as { version?: string }).version });
  }
  statements.push({ place: "clients/telemetry/version.ts LIBRARY_VERSION", version: first(read(root, "clients/telemetry/version.ts"), /LIBRARY_VERSION = "([^"]*)"/) });
  // what the pages a reader follows show of the version (a package's README ships in its tarball): the file `npm pack` writes, a report's libraryVersion
  const docs = readdirSync(join(root, "docs"), { recursive: true }).map(String).filter((file) => file.endsWith(".md")).map((file) => join("docs", file));
  for (const page of ["README.md", ...docs.sort(), ...clientPackageDirs(root).map((dir) => join(dir, "README.md"))]) {
    const text = read(root, page);
    for (const [, version] of text.matchAll(new RegExp(`docservice-[a-z-]+-(${SEMVER.source})\\.tgz`, "g"))) statements.push({ place: `${page} tarball name`, version });
    for (const [, version] of text.matchAll(/"libraryVersion":"([^"]*)"/g)) statements.push({ place: `${page} libraryVersion`, version });
  }
  const chart = read(root, "charts/docservice-operator/Chart.yaml");
  statements.push(
    { place: "charts/docservice-operator/Chart.yaml version", version: first(chart, /^version:\s*"?([^"\s]+)"?\s*$/m) },
    { place: "charts/docservice-operator/Chart.yaml appVersion", version: first(chart, /^appVersion:\s*"?([^"\s]+)"?\s*$/m) },
  );
  for (const name of readdirSync(join(root, "operator", "examples")).filter((file) => file.endsWith(".yaml")).sort()) {
    const path = join("operator", "examples", name);
    statements.push({ place: `${path} spec.version`, version: first(read(root, path), /^\s+version:\s*"?([^"\s]+)"?\s*$/m) });
  }
  statements.push({ place: "Containerfile ARG VERSION", version: first(read(root, "Containerfile"), /^ARG VERSION=(\S+)$/m) });
  statements.push({ place: "CHANGELOG.md newest release", version: first(read(root, "CHANGELOG.md"), new RegExp(`^## \\[(${SEMVER.source})\\] - \\d{4}-\\d{2}-\\d{2}$`, "m")) });
  return statements;
}

/** The statements that differ from the root package.json's version (or state none). */
export function disagreements(statements: VersionStatement[]): VersionStatement[] {
  const expected = statements.find((s) => s.place === "package.json version")?.version;
  return statements.filter((s) => s.version === undefined || s.version !== expected || !new RegExp(`^${SEMVER.source}$`).test(s.version));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const statements = versionStatements(root);
  const wrong = disagreements(statements);
  const width = Math.max(...statements.map((s) => s.place.length));
  for (const s of statements) console.log(`${wrong.includes(s) ? "✗" : "✓"} ${s.place.padEnd(width)}  ${s.version ?? "(none)"}`);
  if (wrong.length > 0) {
    console.error(`release:check: ${wrong.length} place(s) of ${relative(process.cwd(), root) || "."} disagree with package.json's version`);
    process.exit(1);
  }
  console.log(`release:check: version ${statements[0].version} everywhere (${statements.length} places)`);
}
