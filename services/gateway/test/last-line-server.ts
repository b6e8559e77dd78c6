// A server whose requests fail the ways nobody catches, run as its own process
// by request-scope.test.ts (the test runner would take the uncaught errors itself).
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "../../core/logger.js";
import { failRequestsOnUncaughtErrors, inRequestScope } from "../request-scope.js";

failRequestsOnUncaughtErrors(createLogger("silent"));
const server = createServer((request, response) => {
  inRequestScope({ requestId: "req-1", response }, () => {
    if (request.url === "/unheard-stream-error") setTimeout(() => new EventEmitter().emit("error", new Error("Unexpected end of form")), 5);
    else if (request.url === "/unawaited-rejection") void Promise.reject(new Error("nobody awaited this"));
    else response.end("fine");
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log((server.address() as AddressInfo).port);
  if (process.argv[2] === "fail-outside-requests") {
    setTimeout(() => {
      throw new Error("background failure");
    }, 100);
  }
});
