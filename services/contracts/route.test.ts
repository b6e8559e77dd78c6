import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, test } from "node:test";
import { ServiceError } from "../core/errors.js";
import { queryValue, queryValues, type RequestContext } from "./route.js";

const context = (query: string): RequestContext => ({
  request: {} as IncomingMessage,
  query: new URLSearchParams(query),
  requestId: "test",
  clientIp: "127.0.0.1",
});

describe("query parameters", () => {
  test("a parameter given once is its value; an absent one is empty", () => {
    assert.equal(queryValue(context("email=a%40x.test"), "email"), "a@x.test");
    assert.equal(queryValue(context("other=1"), "email"), "");
    assert.equal(queryValue(context("email="), "email"), "");
    assert.deepEqual(queryValues(context("from=2026-01-01&to=2026-01-31"), ["licenseKey", "from", "to"]), {
      licenseKey: "",
      from: "2026-01-01",
      to: "2026-01-31",
    });
  });

  test("a repeated parameter is a VALIDATION_ERROR naming it, whatever the values", () => {
    for (const query of ["email=a@x&email=b@y", "email=a@x&email=a@x", "email=&email=b@y", "email&email"]) {
      assert.throws(
        () => queryValue(context(query), "email"),
        (error: unknown) => {
          assert.ok(error instanceof ServiceError);
          assert.equal(error.code, "VALIDATION_ERROR");
          assert.equal(error.httpStatus, 400);
          assert.deepEqual(error.details, [{ field: "email", issue: "must be given once, not 2 times" }]);
          return true;
        },
        query,
      );
    }
  });

  test("every repeated parameter of a route is named in one answer; other parameters may repeat", () => {
    assert.throws(
      () => queryValues(context("email=a@x&code=1&code=2&email=b@y&email=c@z&utm=1&utm=2"), ["email", "code"]),
      (error: unknown) => {
        assert.ok(error instanceof ServiceError);
        assert.deepEqual(error.details, [
          { field: "email", issue: "must be given once, not 3 times" },
          { field: "code", issue: "must be given once, not 2 times" },
        ]);
        return true;
      },
    );
    assert.deepEqual(queryValues(context("email=a@x&utm=1&utm=2"), ["email"]), { email: "a@x" });
  });
});
