import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** Where embedded stores, generated secrets and the outbox live. */
export class DataDir {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
    mkdirSync(this.root, { recursive: true });
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  /** A random secret generated on first use and kept (mode 0600) for later starts. */
  secret(name: string): string {
    const file = this.path("secrets", name);
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
    }
    return readFileSync(file, "utf8").trim();
  }
}
