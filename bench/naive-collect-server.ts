import { createServer } from "node:http";
import { Kafka, logLevel } from "kafkajs";

// The pipeline a user would write instead of ours, for bench:collect: node:http, and per request
// one kafkajs producer.send with acks=all of the report's events, then 202; kafkajs as npm
// installs it, with its default producer.

const topic = process.env.TOPIC!;
const kafka = new Kafka({ clientId: "naive-collect", brokers: process.env.KAFKA_BROKERS!.split(","), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", async () => {
    const licenseKey = String(request.headers["x-license-key"] ?? "");
    const report = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { events: object[] };
    const receivedAt = new Date().toISOString();
    let status = 202;
    try {
      await producer.send({ topic, acks: -1, messages: report.events.map((event) => ({ key: licenseKey, value: JSON.stringify({ ...event, licenseKey, receivedAt }) })) });
    } catch {
      status = 503;
    }
    const body = JSON.stringify(status === 202 ? { accepted: report.events.length } : { error: "Kafka unavailable" });
    response.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
    response.end(body);
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
