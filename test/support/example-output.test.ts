import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { outputProblems, shownOutputs } from "./example-output.js";

const example = [
  "# explains, not shown output",
  "curl -s http://localhost:8080/v1/collect",
  '# 202 {"accepted":1,"ids":["HASH-…",…]}',
  "",
  "# explains too",
  "curl -s http://localhost:8080/v1/usage",
  '# {"documents":1,"byMonth":[{"month":"2026-11",',
  '#   "opens":…}]}',
  "npx docservice verify signed/",
  "# 2 done, … failed",
].join("\n");

describe("the output a docs example shows", () => {
  test("is the comment lines right under a command: statuses, JSON over several lines, text", () => {
    const shown = shownOutputs(example, 10);
    assert.deepEqual(
      shown.map(({ line, status, text }) => ({ line, status, text })),
      [
        { line: 12, status: 202, text: undefined },
        { line: 16, status: undefined, text: undefined },
        { line: 19, status: undefined, text: "2 done, … failed" },
      ],
    );
    assert.ok(shown[0].json && shown[1].json);
  });

  test("matches output that has it, with … for what varies and keys not shown", () => {
    const output = '{"accepted":1,"ids":["HASH-0A","x"]}{"documents":1,"extra":true,"byMonth":[{"month":"2026-11","opens":3}]}\nok a.pdf\n2 done, 7 failed\n';
    assert.deepEqual(outputProblems(shownOutputs(example), output, [202, 200]), []);
  });

  test("fails on a value, a missing key, an array of another length, a missing line, or an order not shown", () => {
    const good = '{"accepted":1,"ids":["HASH-0A"]}{"documents":1,"byMonth":[{"month":"2026-11","opens":3}]}\n2 done, 0 failed\n';
    const cases = [
      good.replace('"documents":1', '"documents":2'),
      good.replace('"month":"2026-11",', ""),
      good.replace('{"month":"2026-11","opens":3}', '{"month":"2026-11","opens":3},{"month":"2026-12","opens":1}'),
      good.replace("2 done, 0 failed", "2 done"),
      `2 done, 0 failed\n${good.replace("\n2 done, 0 failed", "")}`,
    ];
    for (const output of cases) assert.equal(outputProblems(shownOutputs(example), output, [202, 200]).length, 1, output);
  });

  test("fails on a status not received, and on an error status the example does not show", () => {
    const output = '{"accepted":1,"ids":["HASH-0A"]}{"documents":1,"byMonth":[{"month":"2026-11","opens":3}]}\n2 done, 0 failed\n';
    assert.match(outputProblems(shownOutputs(example), output, [200, 200]).join(), /never received the 202/);
    assert.match(outputProblems(shownOutputs(example), output, [202, 401]).join(), /received 401/);
  });

  test("refuses shown JSON that is not JSON with …", () => {
    assert.throws(() => shownOutputs('curl x\n# {"a": nope}'), /line 2: the JSON shown is not JSON/);
    assert.throws(() => shownOutputs('curl x\n# {"a": 1\necho'), /line 2: the JSON shown does not close/);
  });
});
