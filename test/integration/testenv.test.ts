// Self-test of the test environment helpers in test/support/.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { startMailpit, type Mailpit } from "../support/mailpit.js";
import { redisPing, startRedis } from "../support/redis.js";

describe("redis", () => {
  test("answers PING, and again on the same port after stop/start", async () => {
    const redis = await startRedis();
    try {
      assert.equal(redis.url, `redis://127.0.0.1:${redis.port}`);
      assert.equal(await redisPing(redis.port), true);
      await redis.stop();
      assert.equal(await redisPing(redis.port), false);
      await redis.start();
      assert.equal(await redisPing(redis.port), true);
    } finally {
      await redis.stop();
    }
  });
});

describe("mailpit", () => {
  let mailpit: Mailpit;
  before(async () => {
    mailpit = await startMailpit();
  });
  after(async () => {
    await mailpit?.stop();
  });

  test("receives a mail sent over SMTP", async () => {
    const since = new Date();
    await sendMail(mailpit.smtpPort, {
      from: "noreply@docservice.test",
      to: "Alice@Example.test",
      subject: "Your sign-in code",
      text: "Code: 123456",
    });
    // A recipient that contains the address must not count as a match.
    await sendMail(mailpit.smtpPort, {
      from: "noreply@docservice.test",
      to: "malice@example.test",
      subject: "Other",
      text: "other",
    });

    const mail = await mailpit.latestMessageTo("alice@example.test", { after: since });
    assert.equal(mail.subject, "Your sign-in code");
    assert.equal(mail.text.trim(), "Code: 123456");
    assert.equal(mail.from, "noreply@docservice.test");
    assert.deepEqual(mail.to, ["Alice@Example.test"]);
    assert.equal(await mailpit.countTo("alice@example.test"), 1);

    await mailpit.deleteAll();
    assert.equal(await mailpit.countTo("alice@example.test"), 0);
    await assert.rejects(mailpit.latestMessageTo("alice@example.test", { timeoutMs: 300 }), /alice@example\.test/);
  });
});

/** A minimal SMTP client conversation, so this test needs no mail library. */
async function sendMail(port: number, mail: { from: string; to: string; subject: string; text: string }) {
  const socket = connect({ port, host: "127.0.0.1" });
  const reply = replyReader(socket);
  const step = async (command: string | null, code: number) => {
    if (command !== null) socket.write(`${command}\r\n`);
    const line = await reply();
    assert.equal(Number(line.slice(0, 3)), code, `after ${command ?? "connect"}: ${line}`);
  };
  try {
    await step(null, 220);
    await step("EHLO docservice.test", 250);
    await step(`MAIL FROM:<${mail.from}>`, 250);
    await step(`RCPT TO:<${mail.to}>`, 250);
    await step("DATA", 354);
    const message = [
      `From: <${mail.from}>`,
      `To: <${mail.to}>`,
      `Subject: ${mail.subject}`,
      `Date: ${new Date().toUTCString()}`,
      "",
      mail.text,
    ].join("\r\n");
    await step(`${message}\r\n.`, 250);
    await step("QUIT", 221);
  } finally {
    socket.destroy();
  }
}

/** Returns a function resolving with the last line of each SMTP reply ("250 OK"), skipping "250-..." lines. */
function replyReader(socket: Socket): () => Promise<string> {
  let buffer = "";
  const lines: string[] = [];
  let waiting: ((line: string) => void) | undefined;
  let failure: Error | undefined;
  const flush = () => {
    if (waiting && lines.length > 0) {
      const resolve = waiting;
      waiting = undefined;
      resolve(lines.shift()!);
    }
  };
  socket.on("data", (chunk) => {
    buffer += chunk.toString("utf8");
    let end: number;
    while ((end = buffer.indexOf("\r\n")) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line[3] !== "-") lines.push(line);
    }
    flush();
  });
  socket.on("error", (err) => (failure = err));
  return () =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      waiting = resolve;
      socket.once("close", () => reject(failure ?? new Error("SMTP connection closed")));
      flush();
    });
}
