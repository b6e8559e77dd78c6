/**
 * DocService on the real node (kube-node.ts) as its users install it: the
 * images `npm run image` builds, the chart with helm, Kafka and Redis from
 * test/e2e/manifests. Shared by the end-to-end test and the load runner's
 * cluster mode (loadtest/cluster-target.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cacheBin } from "./cache.js";
import { codeIn } from "./key-flow.js";
import { kubectl } from "./kube.js";
import type { KubeNode } from "./kube-node.js";
import { runCommand } from "./run-command.js";
import { waitFor } from "./wait.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The platform's version: the tag its images are built with. */
export const PLATFORM_VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

/** The docker-archives a build script prints ("name tag path" per line); they carry their full tags for `ctr import`. */
export async function buildImages(script: string): Promise<string[]> {
  const result = await runCommand("bash", [join(ROOT, script)], { cwd: ROOT, timeoutMs: 40 * 60_000 });
  if (result.code !== 0) throw new Error(`${script} failed:\n${result.output.slice(-4000)}`);
  return result.output
    .split("\n")
    .map((line) => line.trim().split(/\s+/).at(-1) ?? "")
    .filter((path) => path.endsWith(".docker.tar"));
}

/**
 * The platform's two images and the cluster's Kafka and Redis, built (or taken
 * from the cache) as archives for {@link KubeNode.importImage}. Build before
 * starting the node: the node holds the machine's lock while it runs.
 */
export async function buildPlatformImages(): Promise<string[]> {
  const archives = await buildImages("scripts/image/build.sh");
  if (archives.length !== 2) throw new Error(`expected the core and conversion images, got: ${archives.join(", ")}`);
  // Kafka and Redis as a user of the chart might run them (test/e2e/manifests), from images built the same way
  return [...archives, ...(await buildImages("scripts/testenv/cluster-images.sh"))];
}

/** Imports archives into the node; resolves the image names. */
export async function importImages(node: KubeNode, archives: string[]): Promise<string[]> {
  const images: string[] = [];
  for (const archive of archives) images.push(...(await node.importImage(archive)));
  return images;
}

export async function helm(node: KubeNode, args: string[]): Promise<void> {
  const result = await runCommand(cacheBin("helm"), ["--kubeconfig", node.kubeconfigPath, ...args], { cwd: ROOT, timeoutMs: 10 * 60_000 });
  if (result.code !== 0) throw new Error(`helm ${args.join(" ")}:\n${result.output}`);
}

/** The operator from the chart's own files, into `namespace`, with `values` (YAML). */
export async function installOperator(node: KubeNode, namespace: string, valuesFile: string): Promise<void> {
  await helm(node, ["install", "docservice-operator", join(ROOT, "charts/docservice-operator"), "-n", namespace, "-f", valuesFile, "--wait", "--timeout", "5m"]);
}

/** Kafka and Redis in `namespace` (test/e2e/manifests: Services `kafka:9092` and `redis:6379`), rolled out. */
export async function applyKafkaAndRedis(node: KubeNode, namespace: string): Promise<void> {
  await kubectl(node, ["apply", "-n", namespace, "-f", join(ROOT, "test/e2e/manifests/redis.yaml"), "-f", join(ROOT, "test/e2e/manifests/kafka.yaml")]);
  for (const set of ["redis", "kafka"]) await kubectl(node, ["rollout", "status", `statefulset/${set}`, "-n", namespace, "--timeout=300s"]);
}

/** The verification code from the newest mail to `email` in the keys pod's outbox (an instance without SMTP writes mail there). */
export async function codeFromOutbox(node: KubeNode, namespace: string, email: string, instance = "docservice"): Promise<string> {
  const script = `const fs=require("fs"),d="/var/lib/docservice/outbox";const f=fs.readdirSync(d).map(n=>d+"/"+n).filter(p=>fs.readFileSync(p,"utf8").includes(${JSON.stringify(email)})).sort((a,b)=>fs.statSync(a).mtimeMs-fs.statSync(b).mtimeMs).pop();process.stdout.write(f?fs.readFileSync(f,"utf8"):"")`;
  let mail = "";
  await waitFor(async () => (mail = await kubectl(node, ["exec", "-n", namespace, `deployment/${instance}-keys`, "--", "node", "-e", script])) !== "", {
    what: `the mail to ${email}`,
    timeoutMs: 90_000,
    intervalMs: 500,
  });
  return codeIn(mail.replace(/=\r?\n/g, ""));
}
