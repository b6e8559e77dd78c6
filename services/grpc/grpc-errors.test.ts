import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Metadata, status as GrpcStatus, type ServiceError as GrpcServiceError } from "@grpc/grpc-js";
import { ERROR_CODES, ServiceError, asServiceError, isErrorCode, validationError, type ErrorCode } from "../core/errors.js";
import { fromGrpcError, toGrpcStatus } from "./grpc-errors.js";

/** What a grpc-js client hands its callback for a status the server sent. */
function clientError(status: { code?: GrpcStatus; details?: string; metadata?: Metadata }): GrpcServiceError {
  const code = status.code ?? GrpcStatus.UNKNOWN;
  const details = status.details ?? "";
  const error = new Error(`${code} ${GrpcStatus[code]}: ${details}`);
  return Object.assign(error, { code, details, metadata: status.metadata ?? new Metadata() });
}

function roundTrip(error: unknown): ServiceError {
  return fromGrpcError(clientError(toGrpcStatus(error)), "KeyService");
}

describe("toGrpcStatus / fromGrpcError round trip", () => {
  test("code, message, details and retryAfterSeconds survive", () => {
    const original = new ServiceError("RATE_LIMITED", "Too many requests; try again later.", {
      details: [{ field: "email", issue: "too many codes" }],
      retryAfterSeconds: 42,
    });
    const status = toGrpcStatus(original);
    assert.equal(status.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.equal(status.details, "Too many requests; try again later.");

    const back = roundTrip(original);
    assert.ok(back instanceof ServiceError);
    assert.equal(back.code, "RATE_LIMITED");
    assert.equal(back.message, original.message);
    assert.deepEqual(back.details, original.details);
    assert.equal(back.retryAfterSeconds, 42);
    assert.equal(back.httpStatus, 429);
  });

  test("every error code round-trips, with and without options", () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const bare = roundTrip(new ServiceError(code, `message of ${code}`));
      assert.equal(bare.code, code);
      assert.equal(bare.message, `message of ${code}`);
      assert.equal(bare.details, undefined, code);
      // a 503 always says when to come back
      assert.equal(bare.retryAfterSeconds, code === "UNAVAILABLE" ? 1 : undefined, code);

      const details = [
        { field: "a", issue: "is wrong" },
        { field: "b.c", issue: 'has "quotes", commas; and = signs' },
      ];
      const full = roundTrip(new ServiceError(code, `full ${code}`, { details, retryAfterSeconds: 7 }));
      assert.equal(full.code, code);
      assert.deepEqual(full.details, details);
      assert.equal(full.retryAfterSeconds, 7);
    }
  });

  test("a validation error keeps every field issue", () => {
    const original = validationError([
      { field: "code", issue: "must be the 6 digits from the e-mail" },
      { field: "email", issue: "is not a valid e-mail address" },
    ]);
    const back = roundTrip(original);
    assert.equal(back.code, "VALIDATION_ERROR");
    assert.equal(back.httpStatus, 400);
    assert.equal(back.message, original.message);
    assert.deepEqual(back.details, original.details);
  });

  test("retryAfterSeconds of 0 and an empty details list are kept", () => {
    const back = roundTrip(new ServiceError("UNAVAILABLE", "down", { details: [], retryAfterSeconds: 0 }));
    assert.deepEqual(back.details, []);
    assert.equal(back.retryAfterSeconds, 0);
  });

  test(
    "details with non-ASCII text survive",
    () => {
      const details = [{ field: "name", issue: "must not contain “é”" }];
      const back = roundTrip(new ServiceError("VALIDATION_ERROR", "bad", { details }));
      assert.deepEqual(back.details, details);
    },
  );

  test("unknown errors become INTERNAL without leaking their message", () => {
    const secret = "password=hunter2 at db.internal:5432";
    const status = toGrpcStatus(new Error(secret));
    assert.equal(status.code, GrpcStatus.INTERNAL);
    assert.ok(!String(status.details).includes("hunter2"));
    assert.equal(status.metadata?.get("docservice-error-code")[0], "INTERNAL");
    for (const value of Object.values(status.metadata?.getMap() ?? {})) assert.ok(!String(value).includes("hunter2"));

    const back = fromGrpcError(clientError(status), "KeyService");
    assert.equal(back.code, "INTERNAL");
    assert.equal(back.httpStatus, 500);
    assert.ok(!back.message.includes("hunter2"));

    for (const thrown of ["a string", 42, undefined, null, { message: secret }]) {
      const s = toGrpcStatus(thrown);
      assert.equal(s.code, GrpcStatus.INTERNAL);
      assert.ok(!String(s.details).includes("hunter2"));
    }
  });
});

describe("fromGrpcError without our metadata", () => {
  test("UNAVAILABLE (no connection) becomes UNAVAILABLE, HTTP 503, retry after 1 s", () => {
    const error = fromGrpcError(clientError({ code: GrpcStatus.UNAVAILABLE, details: "No connection established" }), "KeyService");
    assert.equal(error.code, "UNAVAILABLE");
    assert.equal(error.httpStatus, 503);
    assert.equal(error.retryAfterSeconds, 1);
    assert.match(error.message, /KeyService/);
    assert.ok(!error.message.includes("No connection established"));
  });

  test("DEADLINE_EXCEEDED becomes TIMEOUT, HTTP 504", () => {
    const error = fromGrpcError(clientError({ code: GrpcStatus.DEADLINE_EXCEEDED, details: "Deadline exceeded" }), "KeyService");
    assert.equal(error.code, "TIMEOUT");
    assert.equal(error.httpStatus, 504);
    assert.match(error.message, /KeyService/);
  });

  test("any other status becomes INTERNAL without the server's text", () => {
    for (const code of [GrpcStatus.UNKNOWN, GrpcStatus.INTERNAL, GrpcStatus.UNIMPLEMENTED, GrpcStatus.PERMISSION_DENIED]) {
      const error = fromGrpcError(clientError({ code, details: "stack trace: at secret.js:1" }), "KeyService");
      assert.equal(error.code, "INTERNAL", String(code));
      assert.equal(error.httpStatus, 500);
      assert.ok(!error.message.includes("secret.js"));
    }
  });

  test("an unknown code in our metadata key is not trusted", () => {
    const metadata = new Metadata();
    metadata.set("docservice-error-code", "TEAPOT");
    const error = fromGrpcError(clientError({ code: GrpcStatus.UNAVAILABLE, details: "x", metadata }), "KeyService");
    assert.equal(error.code, "UNAVAILABLE");
    const proto = new Metadata();
    proto.set("docservice-error-code", "constructor");
    assert.equal(fromGrpcError(clientError({ code: GrpcStatus.UNKNOWN, details: "x", metadata: proto }), "K").code, "INTERNAL");
  });
});

describe("ERROR_CODES", () => {
  test("every code has an HTTP error status and a non-OK gRPC status", () => {
    for (const [code, { http, grpc }] of Object.entries(ERROR_CODES) as [string, { http: number; grpc: GrpcStatus }][]) {
      assert.ok(Number.isInteger(http) && http >= 400 && http <= 599, `${code}: ${http}`);
      assert.ok(grpc !== GrpcStatus.OK && GrpcStatus[grpc] !== undefined, `${code}: ${grpc}`);
    }
  });

  test("HTTP statuses are distinct except for the two 401 codes", () => {
    // INVALID_CODE and UNAUTHENTICATED deliberately share 401 (and gRPC UNAUTHENTICATED).
    const byStatus = new Map<number, string[]>();
    for (const [code, { http }] of Object.entries(ERROR_CODES)) byStatus.set(http, [...(byStatus.get(http) ?? []), code]);
    for (const [http, codes] of byStatus) {
      if (http === 401) assert.deepEqual(codes.sort(), ["INVALID_CODE", "UNAUTHENTICATED"]);
      else assert.equal(codes.length, 1, `${http} is shared by ${codes.join(", ")}`);
    }
  });

  test("client errors are 4xx and server-side failures 5xx", () => {
    for (const code of ["INTERNAL", "NOT_CONFIGURED", "UNAVAILABLE", "TIMEOUT"] as const) assert.ok(ERROR_CODES[code].http >= 500);
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      if (!["INTERNAL", "NOT_CONFIGURED", "UNAVAILABLE", "TIMEOUT"].includes(code)) assert.ok(ERROR_CODES[code].http < 500, code);
    }
    assert.equal(ERROR_CODES.RATE_LIMITED.http, 429);
    assert.equal(ERROR_CODES.NOT_FOUND.http, 404);
    assert.equal(ERROR_CODES.VALIDATION_ERROR.http, 400);
  });

  test("isErrorCode accepts exactly the table's own keys", () => {
    for (const code of Object.keys(ERROR_CODES)) assert.ok(isErrorCode(code));
    for (const other of ["", "toString", "constructor", "__proto__", "hasOwnProperty", "internal"]) assert.equal(isErrorCode(other), false, other);
  });

  test("asServiceError keeps ServiceErrors and wraps everything else", () => {
    const known = new ServiceError("NOT_FOUND", "nope");
    assert.equal(asServiceError(known), known);
    const cause = new Error("boom");
    const wrapped = asServiceError(cause);
    assert.equal(wrapped.code, "INTERNAL");
    assert.equal(wrapped.cause, cause);
    assert.ok(!wrapped.message.includes("boom"));
  });
});
