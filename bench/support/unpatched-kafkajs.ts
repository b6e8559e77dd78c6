/**
 * kafkajs as a user gets it from npm, for bench:collect's naive pipeline: the
 * version this project pins (for its tests' Kafka administration), installed
 * once into the cache, outside this project's node_modules.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The directory whose node_modules holds the unpatched kafkajs (installed on first use). */
export function unpatchedKafkajs(): string {
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies.kafkajs;
  const dir = join(process.env.DOCSERVICE_CACHE ?? join(homedir(), ".cache", "docservice"), "bench", `kafkajs-${version}-unpatched`);
  if (!existsSync(join(dir, "node_modules", "kafkajs", "package.json"))) {
    console.log(`installing kafkajs ${version} from npm, unpatched, into ${dir} (first time only)`);
    execFileSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", `kafkajs@${version}`], { stdio: ["ignore", "ignore", "inherit"] });
  }
  return dir;
}
