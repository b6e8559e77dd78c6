import { createServer } from "node:http";

// The anchor of bench:auth: a bare node:http server answering GET /v1/auth/key with the same JSON as the gateway.
const body = JSON.stringify(JSON.parse(process.env.BODY ?? "{}"));
const server = createServer((request, response) => {
  response.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
  response.end(body);
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
