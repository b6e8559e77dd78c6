import { createHash } from "node:crypto";
import { createServer } from "node:http";

// The floor of POST /v1/sign over HTTP in bench:sign: a bare node:http server that reads the JSON body,
// decodes its base64 document, hashes it and answers it back as base64 JSON, signing nothing. What any
// JSON API must do to take a document in and give one back, and no more.
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { document: { base64: string } };
    const document = Buffer.from(body.document.base64, "base64");
    createHash("sha256").update(document).digest();
    const answer = `{"document":{"base64":"${document.toString("base64")}","contentType":"application/pdf"}}`;
    response.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(answer) }).end(answer);
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
