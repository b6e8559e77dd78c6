import assert from "node:assert/strict";
import { test } from "node:test";
import { SignatureProblem } from "./signature-problem.js";
import { cmsLength } from "./signed-data.js";

test("the CMS in /Contents ends where its DER length says, the zero padding after it left out", () => {
  const short = Buffer.from([0x30, 0x03, 0x02, 0x01, 0x05]);
  assert.equal(cmsLength(Buffer.concat([short, Buffer.alloc(100)])), 5);
  const long = Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x00]), Buffer.alloc(256, 1)]);
  assert.equal(cmsLength(Buffer.concat([long, Buffer.alloc(10)])), 260);
});

test("a /Contents that is not a DER SEQUENCE, says more than it holds, or has an unusable length is a signature problem", () => {
  for (const bytes of [[0x04, 0x01, 0x00], [0x30], [0x30, 0x05, 0x01], [0x30, 0x82, 0x01], [0x30, 0x80, 0x00, 0x00], [0x30, 0x85, 1, 1, 1, 1, 1]]) {
    assert.throws(() => cmsLength(Buffer.from(bytes)), SignatureProblem, JSON.stringify(bytes));
  }
});
