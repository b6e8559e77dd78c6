import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";

const SERVER = new URL("./test/last-line-server.ts", import.meta.url).pathname;

function startServer(...args: string[]): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const port = once(child.stdout!, "data").then(([line]) => Number(String(line).trim()));
  return { child, port };
}

describe("the last line against errors nobody caught", () => {
  let server: ReturnType<typeof startServer>;
  let base: string;

  before(async () => {
    server = startServer();
    base = `http://127.0.0.1:${await server.port}`;
  });
  after(() => server.child.kill());

  for (const path of ["/unheard-stream-error", "/unawaited-rejection"]) {
    test(`${path}: that request gets a 500 with the JSON body, and the process serves the next one`, async () => {
      const response = await fetch(`${base}${path}`);
      assert.equal(response.status, 500);
      assert.deepEqual(await response.json(), { code: "INTERNAL", error: "Internal Server Error", message: "The request failed unexpectedly.", requestId: "req-1", details: [] });
      assert.equal(await (await fetch(`${base}/`)).text(), "fine");
      assert.equal(server.child.exitCode, null);
    });
  }

  test("an error outside any request still ends the process, with status 1", async () => {
    const failing = startServer("fail-outside-requests");
    await failing.port;
    const [code] = await once(failing.child, "exit");
    assert.equal(code, 1);
  });
});
