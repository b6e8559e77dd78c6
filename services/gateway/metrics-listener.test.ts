import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../core/logger.js";
import { freePort } from "../../test/support/ports.js";
import { serveMetrics } from "./metrics-listener.js";

test("/readyz answers the role's own readiness and /health its dependencies, each with its reason: a store down leaves the pod ready", async () => {
  const port = await freePort();
  let poolUp = false;
  const stop = await serveMetrics({ host: "127.0.0.1", port, metricsToken: undefined }, createLogger("silent"), {
    health: () => Promise.reject(new Error("Redis is away")),
    ready: async () => {
      if (!poolUp) throw new Error("no LibreOffice instance is running yet");
    },
  });
  const probe = async (path: string) => {
    const answer = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: answer.status, body: (await answer.json()) as { status: string; error?: string } };
  };
  try {
    assert.deepEqual(await probe("/readyz").then((p) => [p.status, p.body.error]), [503, "no LibreOffice instance is running yet"]);
    poolUp = true;
    assert.deepEqual(await probe("/readyz").then((p) => [p.status, p.body.status]), [200, "ok"]);
    assert.deepEqual(await probe("/health").then((p) => [p.status, p.body.error]), [503, "Redis is away"]);
  } finally {
    await stop();
  }
});
