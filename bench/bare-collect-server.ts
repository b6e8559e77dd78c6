import { createServer } from "node:http";

// The anchor of bench:collect: a bare node:http server that reads a report, parses its JSON
// and answers 202 {accepted: N} as POST /v1/collect does, with no validation, no Kafka, no log.
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const report = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { events: unknown[] };
    const body = JSON.stringify({ accepted: report.events.length });
    response.writeHead(202, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
    response.end(body);
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
