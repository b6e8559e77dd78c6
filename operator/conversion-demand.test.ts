import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { conversionDemand, demandInPods, gaugeValues, poolLoad } from "./conversion-demand.js";

const TOKEN = "a-metrics-token-of-the-instance";

const metricsText = (waiting: number, inFlight: number, poolSize: number) =>
  [
    "# HELP docservice_conversion_waiting Conversions waiting for a free LibreOffice instance.",
    "# TYPE docservice_conversion_waiting gauge",
    `docservice_conversion_waiting ${waiting}`,
    `docservice_conversion_in_flight ${inFlight}`,
    `docservice_conversion_pool_size ${poolSize}`,
    'docservice_conversions_total{source="docx",target="pdf",outcome="ok"} 12',
    "",
  ].join("\n");

describe("conversion demand", () => {
  const servers: Server[] = [];
  /** What an endless answer had written when its reader let go. */
  let endlessBytesSent = 0;
  after(() => servers.forEach((server) => server.close()));

  /** A pod's metrics listener, which asks for the token as the platform's does. */
  async function pod(answer: (authorization: string | undefined) => [number, string] | "hang" | "endless"): Promise<string> {
    const server = createServer((request, response) => {
      const reply = answer(request.headers.authorization);
      if (reply === "hang") return;
      if (reply === "endless") {
        // a chunked answer (no Content-Length) that never ends: valid metrics first, then comments for as long as it is read
        response.writeHead(200, { "Content-Type": "text/plain" }).write(metricsText(9, 9, 1));
        const more = () => {
          if (response.destroyed) return;
          endlessBytesSent += 64 << 10;
          response.write("#".repeat(64 << 10), () => setImmediate(more));
        };
        return more();
      }
      response.writeHead(reply[0], { "Content-Type": "text/plain" }).end(reply[1]);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  }
  const withToken = (text: string) => (authorization: string | undefined) => (authorization === `Bearer ${TOKEN}` ? [200, text] : [401, "{}"]) as [number, string];

  test("gauges without labels are read; labelled series and comments are not", () => {
    const values = gaugeValues(metricsText(3, 2, 2), ["docservice_conversion_waiting", "docservice_conversions_total"]);
    assert.deepEqual([...values], [["docservice_conversion_waiting", 3]]);
    assert.deepEqual(poolLoad(metricsText(3, 2, 2)), { waiting: 3, inFlight: 2, poolSize: 2 });
    assert.throws(() => poolLoad("docservice_conversion_waiting 1\n"), /docservice_conversion_in_flight, docservice_conversion_pool_size/);
  });

  test("demand is pods' worth of conversions in flight or waiting", () => {
    assert.equal(demandInPods([]), 0);
    assert.equal(demandInPods([{ waiting: 0, inFlight: 1, poolSize: 2 }]), 0.5);
    assert.equal(demandInPods([{ waiting: 4, inFlight: 2, poolSize: 2 }, { waiting: 0, inFlight: 2, poolSize: 2 }]), 4);
  });

  test("read from every pod with the instance's token; a pod that fails, hangs or answers more than 1 MB, with a Content-Length or chunked without end, is left out", async () => {
    const busy = await pod(withToken(metricsText(3, 1, 1)));
    const idle = await pod(withToken(metricsText(0, 0, 1)));
    const failing = await pod(() => [500, "oops"]);
    const flooding = await pod(withToken(metricsText(9, 9, 1) + "#".repeat(2 << 20)));
    const streaming = await pod(() => "endless");
    const hanging = await pod(() => "hang");
    const started = Date.now();
    const demand = await conversionDemand(
      [busy, idle, failing, hanging, flooding, streaming].map((url, i) => ({ pod: `conversion-${i}`, url })),
      TOKEN,
    );
    assert.equal(demand, 4);
    assert.ok(Date.now() - started < 4_000, "a hanging pod costs at most the scrape timeout");
    // the reader lets go at its bound, not at the timeout (by then, gigabytes on a loopback); socket buffers hold some more
    assert.ok(endlessBytesSent < 16 << 20, `the endless answer was read no further than its bound: ${endlessBytesSent} bytes sent`);
  });

  test("no pod answering is an error, never a demand of 0; no pods at all is 0", async () => {
    const refusing = await pod(withToken(metricsText(1, 1, 1)));
    await assert.rejects(conversionDemand([{ pod: "conversion-0", url: refusing }], "wrong-token"), /no conversion pod answered: conversion-0: \/metrics answered 401/);
    assert.equal(await conversionDemand([], TOKEN), 0);
  });
});
