import assert from "node:assert/strict";
import { ServiceError, type ErrorCode } from "../../services/core/errors.js";

/** The ServiceError a call settles with, asserted to carry `code`; fails the test when the call succeeds or throws anything else. */
export async function rejection(call: Promise<unknown>, code: ErrorCode): Promise<ServiceError> {
  const error = await call.then(
    () => assert.fail(`expected ${code}, but the call succeeded`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ServiceError, String(error));
  assert.equal(error.code, code, error.message);
  return error;
}
