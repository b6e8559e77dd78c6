import { existsSync } from "node:fs";
import { chromium, type Browser, type LaunchOptions } from "playwright-core";

/** Debian's Chromium, installed by scripts/testenv/browser.sh. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Launches Debian's headless Chromium through playwright-core. The caller closes
 * it (`browser.close()`). `options.args` are added to the ones below.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run scripts/testenv/setup.sh`);
  // Chromium's sandbox cannot start as root (nor in most containers).
  const root = process.getuid?.() === 0;
  return chromium.launch({
    timeout: 30_000,
    ...options,
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: !root,
    args: [
      ...(root ? ["--no-sandbox"] : []),
      "--disable-gpu",
      // No calls home: this machine's network refuses them (and slowly, many at a time).
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
      // Containers often have a small /dev/shm.
      "--disable-dev-shm-usage",
      ...(options.args ?? []),
    ],
  });
}
