import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { ConversionDemand, demandInPods, poolLoad, sampleValues } from "./conversion-demand.js";

const TOKEN = "a-metrics-token-of-the-instance";

const metricsText = (waiting: number, inFlight: number, poolSize: number, heldSeconds?: number) =>
  [
    "# HELP docservice_conversion_waiting Conversions waiting for a free LibreOffice instance.",
    "# TYPE docservice_conversion_waiting gauge",
    `docservice_conversion_waiting ${waiting}`,
    `docservice_conversion_in_flight ${inFlight}`,
    `docservice_conversion_pool_size ${poolSize}`,
    'docservice_conversions_total{source="docx",target="pdf",outcome="ok"} 12',
    ...(heldSeconds === undefined ? [] : ["# TYPE docservice_conversion_held_seconds_total counter", `docservice_conversion_held_seconds_total ${heldSeconds}`]),
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

  test("series without labels are read; labelled series and comments are not", () => {
    const values = sampleValues(metricsText(3, 2, 2), ["docservice_conversion_waiting", "docservice_conversions_total"]);
    assert.deepEqual([...values], [["docservice_conversion_waiting", 3]]);
    assert.deepEqual(poolLoad(metricsText(3, 2, 2)), { waiting: 3, inFlight: 2, poolSize: 2 });
    assert.deepEqual(poolLoad(metricsText(3, 2, 2, 41.5)), { waiting: 3, inFlight: 2, poolSize: 2, heldSeconds: 41.5 });
    assert.throws(() => poolLoad("docservice_conversion_waiting 1\n"), /docservice_conversion_in_flight, docservice_conversion_pool_size/);
  });

  test("demand is pods' worth of conversions held", () => {
    assert.equal(demandInPods([]), 0);
    assert.equal(demandInPods([{ held: 1, poolSize: 2 }]), 0.5);
    assert.equal(demandInPods([{ held: 6, poolSize: 2 }, { held: 2, poolSize: 2 }]), 4);
  });

  test("each pod's demand is the mean it held since an earlier reading at least 5 s and at most 60 s old; the first reading, a restart or a pod without the counter count the moment", async () => {
    let nowMs = 0;
    let answer = metricsText(0, 1, 1, 10);
    const url = await pod((authorization) => withToken(answer)(authorization));
    const demand = new ConversionDemand(() => nowMs);
    const read = (run = "uid-1/0") => demand.read([{ pod: "conversion-0", run, url }], TOKEN);
    // first reading: one conversion in flight at that moment
    assert.equal(await read(), 1);
    // 15 s later: held for 6 of those seconds, though one is in flight again now
    nowMs = 15_000;
    answer = metricsText(0, 1, 1, 16);
    assert.equal(await read(), 0.4);
    // a second later (another client): the mean since the reading at 0 s, not over the last second
    nowMs = 16_000;
    answer = metricsText(0, 0, 1, 18);
    assert.equal(await read(), 0.5);
    // however often it is read, a reading is kept only 5 s after the last one kept: a thousand reads within a second
    // leave the reading at 15 s as the one the next mean starts from
    answer = metricsText(0, 0, 1, 18);
    for (let i = 0; i < 1000; i++) await read();
    nowMs = 21_000;
    answer = metricsText(0, 0, 1, 21);
    assert.equal(await read(), 5 / 6);
    // the pod's container restarted: its counter starts again, and the moment counts
    nowMs = 30_000;
    answer = metricsText(2, 1, 1, 0.5);
    assert.equal(await read("uid-1/1"), 3);
    // two readings of the restarted pod 15 s apart: the mean between them
    nowMs = 45_000;
    answer = metricsText(0, 0, 1, 8);
    assert.equal(await read("uid-1/1"), 0.5);
    // the last reading was over 60 s ago: the moment
    nowMs = 110_000;
    answer = metricsText(0, 1, 1, 20);
    assert.equal(await read("uid-1/1"), 1);
    // a pod of an earlier version, without the counter: the moment, every time
    answer = metricsText(1, 1, 1);
    nowMs = 125_000;
    assert.equal(await read("uid-2/0"), 2);
  });

  test("read from every pod with the instance's token; a pod that fails, hangs or answers more than 1 MB, with a Content-Length or chunked without end, is left out", async () => {
    const busy = await pod(withToken(metricsText(3, 1, 1)));
    const idle = await pod(withToken(metricsText(0, 0, 1)));
    const failing = await pod(() => [500, "oops"]);
    const flooding = await pod(withToken(metricsText(9, 9, 1) + "#".repeat(2 << 20)));
    const streaming = await pod(() => "endless");
    const hanging = await pod(() => "hang");
    const started = Date.now();
    const demand = await new ConversionDemand().read(
      [busy, idle, failing, hanging, flooding, streaming].map((url, i) => ({ pod: `conversion-${i}`, run: `uid-${i}/0`, url })),
      TOKEN,
    );
    assert.equal(demand, 4);
    assert.ok(Date.now() - started < 4_000, "a hanging pod costs at most the scrape timeout");
    // the reader lets go at its bound, not at the timeout (by then, gigabytes on a loopback); socket buffers hold some more
    assert.ok(endlessBytesSent < 16 << 20, `the endless answer was read no further than its bound: ${endlessBytesSent} bytes sent`);
  });

  test("no pod answering is an error, never a demand of 0; no pods at all is 0", async () => {
    const refusing = await pod(withToken(metricsText(1, 1, 1)));
    await assert.rejects(new ConversionDemand().read([{ pod: "conversion-0", run: "uid-0/0", url: refusing }], "wrong-token"), /no conversion pod answered: conversion-0: \/metrics answered 401/);
    assert.equal(await new ConversionDemand().read([], TOKEN), 0);
  });
});
