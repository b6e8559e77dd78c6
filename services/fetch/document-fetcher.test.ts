import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { ServiceError } from "../core/errors.js";
import { classifyAddress, isForbiddenAddress } from "./address-ranges.js";
import { fetchDocument, type FetchDocumentOptions } from "./document-fetcher.js";
import { MAX_URL_CHARS } from "./url-length.js";

// Only loopback traffic: every server here listens on 127.0.0.1, and every other address is
// either refused before any connection or checked with the pure classification functions.

const DOCUMENT = Buffer.from("%PDF-1.7\n% test document\n%%EOF\n");

interface TestServer {
  port: number;
  origin: string;
  hostPort: string;
  hits: string[];
  close(): Promise<void>;
}

async function startServer(handler: http.RequestListener): Promise<TestServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    res.on("error", () => {});
    handler(req, res);
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function options(overrides: Partial<FetchDocumentOptions> = {}): FetchDocumentOptions {
  return { maxBytes: 1024 * 1024, timeoutMs: 5000, maxRedirects: 3, allowHosts: [], ...overrides };
}

async function rejects422(promise: Promise<unknown>, message: RegExp): Promise<ServiceError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof ServiceError, String(caught));
  assert.equal(caught.code, "UNPROCESSABLE_DOCUMENT", caught.message);
  assert.equal(caught.httpStatus, 422);
  assert.match(caught.message, message);
  return caught;
}

async function rejects400(promise: Promise<unknown>, issue: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, "VALIDATION_ERROR");
    assert.equal(error.httpStatus, 400);
    assert.equal(error.details?.length, 1);
    assert.equal(error.details?.[0]?.field, "document.url");
    assert.match(error.details?.[0]?.issue ?? "", issue);
    return true;
  });
}

describe("classifyAddress / isForbiddenAddress", () => {
  const cases: Array<[string, ReturnType<typeof classifyAddress>]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["169.254.169.254", "cloud-metadata"],
    ["169.254.170.2", "cloud-metadata"],
    ["100.100.100.200", "cloud-metadata"],
    ["fd00:ec2::254", "cloud-metadata"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["0.1.2.3", "reserved"],
    ["100.64.0.1", "shared"],
    ["100.127.255.255", "shared"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["2001:db8::1", "reserved"],
    ["3fff:fff:ffff::1", "reserved"],
    ["100::1", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.5", "private"],
    ["::ffff:169.254.169.254", "cloud-metadata"],
    ["[::ffff:a9fe:a9fe]", "cloud-metadata"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::a00:1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["2002:c0a8:101::1", "private"],
    ["::7f00:1", "reserved"],
    ["not an address", "reserved"],
    ["1.2.3.4.5", "reserved"],
    ["1::2::3", "reserved"],
    // public
    ["8.8.8.8", null],
    ["1.1.1.1", null],
    ["172.32.0.1", null],
    ["100.128.0.1", null],
    ["169.255.0.1", null],
    ["2606:4700:4700::1111", null],
    ["3ffe:1000::1", null],
    ["::ffff:8.8.8.8", null],
    ["64:ff9b::808:808", null],
    ["2002:808:808::1", null],
  ];
  for (const [address, expected] of cases) {
    test(`${address} → ${expected ?? "public"}`, () => {
      assert.equal(classifyAddress(address), expected);
      assert.equal(isForbiddenAddress(address), expected !== null);
    });
  }
});

describe("fetchDocument", () => {
  let files: TestServer;
  let other: TestServer;

  before(async () => {
    files = await startServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const redirect = /^\/r\/(\d+)$/.exec(url.pathname);
      if (url.pathname === "/doc.pdf") {
        res.writeHead(200, { "content-type": "application/pdf", "content-length": DOCUMENT.length });
        res.end(DOCUMENT);
      } else if (redirect) {
        const left = Number(redirect[1]);
        const status = [301, 302, 303, 307, 308][left % 5]!;
        // Alternate absolute and relative Locations.
        // /r/N answers with N redirects in a row before the document.
        const next = left <= 1 ? "/doc.pdf" : `/r/${left - 1}`;
        res.writeHead(status, { location: left % 2 === 0 ? `http://${req.headers.host}${next}` : next });
        res.end();
      } else if (url.pathname === "/to-other") {
        res.writeHead(302, { location: `${other.origin}/doc.pdf` });
        res.end();
      } else if (url.pathname === "/to-ftp") {
        res.writeHead(302, { location: "ftp://127.0.0.1/doc.pdf" });
        res.end();
      } else if (url.pathname === "/big-declared") {
        // Headers only; the body never comes, so only an early refusal ends this quickly.
        res.writeHead(200, { "content-length": "5000" });
        res.flushHeaders();
      } else if (url.pathname === "/big-chunked") {
        res.writeHead(200, { "content-type": "application/pdf" });
        const chunk = Buffer.alloc(256, 0x41);
        let sent = 0;
        const timer = setInterval(() => {
          if (res.destroyed || sent > 100) {
            clearInterval(timer);
            res.end();
            return;
          }
          res.write(chunk);
          sent++;
        }, 2);
      } else if (url.pathname === "/silent") {
        // Never answers.
      } else if (url.pathname === "/trickle") {
        res.writeHead(200, { "content-length": "1000" });
        res.write("x");
        // …and nothing more.
      } else if (url.pathname === "/truncated") {
        res.writeHead(200, { "content-length": "1000" });
        res.write("only a part");
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (url.pathname === "/redirect-no-location") {
        res.writeHead(302);
        res.end();
      } else {
        res.writeHead(404);
        res.end("not found");
      }
    });
    other = await startServer((_req, res) => {
      res.writeHead(200, { "content-length": DOCUMENT.length });
      res.end(DOCUMENT);
    });
  });

  after(async () => {
    await files.close();
    await other.close();
  });

  test("fetches a document from an allow-listed host:port", async () => {
    const body = await fetchDocument(`${files.origin}/doc.pdf`, options({ allowHosts: [files.hostPort] }));
    assert.deepEqual(body, DOCUMENT);
  });

  test("an allow-list entry without a port allows every port of that host", async () => {
    const body = await fetchDocument(`${other.origin}/x`, options({ allowHosts: ["127.0.0.1"] }));
    assert.deepEqual(body, DOCUMENT);
  });

  test("an allow-listed host name is resolved and connected to", async () => {
    const body = await fetchDocument(
      `http://localhost:${files.port}/doc.pdf`,
      options({ allowHosts: [`LOCALHOST:${files.port}`] }),
    );
    assert.deepEqual(body, DOCUMENT);
  });

  test("refuses loopback addresses that are not allow-listed, naming the reason", async () => {
    const before = files.hits.length;
    await rejects422(
      fetchDocument(`${files.origin}/doc.pdf`, options()),
      /resolves to a loopback address \(127\.0\.0\.1\), which is not allowed/,
    );
    await rejects422(
      fetchDocument(`http://localhost:${files.port}/doc.pdf`, options()),
      /resolves to a loopback address \((127\.0\.0\.1|::1)\)/,
    );
    await rejects422(fetchDocument(`http://[::1]:${files.port}/doc.pdf`, options()), /loopback address \(::1\)/);
    await rejects422(
      fetchDocument(`http://[::ffff:127.0.0.1]:${files.port}/doc.pdf`, options()),
      /loopback address/,
    );
    await rejects422(fetchDocument(`http://0x7f000001:${files.port}/doc.pdf`, options()), /loopback address \(127\.0\.0\.1\)/);
    await rejects422(fetchDocument(`http://0.0.0.0:${files.port}/doc.pdf`, options()), /unspecified address/);
    // The port must match too.
    await rejects422(
      fetchDocument(`${files.origin}/doc.pdf`, options({ allowHosts: ["127.0.0.1:1"] })),
      /loopback address/,
    );
    assert.equal(files.hits.length, before, "no request reached the server");
  });

  test("refuses metadata host names before resolving them", async () => {
    await rejects422(
      fetchDocument("http://metadata.google.internal/computeMetadata/v1/", options()),
      /cloud metadata host \(metadata\.google\.internal\)/,
    );
    await rejects422(fetchDocument("http://METADATA.google.internal./", options()), /cloud metadata host/);
  });

  test("follows a chain of 3 redirects", async () => {
    const body = await fetchDocument(`${files.origin}/r/3`, options({ allowHosts: [files.hostPort] }));
    assert.deepEqual(body, DOCUMENT);
  });

  test("refuses a 4th redirect", async () => {
    await rejects422(
      fetchDocument(`${files.origin}/r/4`, options({ allowHosts: [files.hostPort] })),
      /redirected more than 3 times/,
    );
    await rejects422(
      fetchDocument(`${files.origin}/r/1`, options({ allowHosts: [files.hostPort], maxRedirects: 0 })),
      /redirected more than 0 times/,
    );
  });

  test("re-checks the address after a redirect", async () => {
    const before = other.hits.length;
    await rejects422(
      fetchDocument(`${files.origin}/to-other`, options({ allowHosts: [files.hostPort] })),
      new RegExp(`loopback address \\(127\\.0\\.0\\.1\\)`),
    );
    assert.equal(other.hits.length, before, "the redirect target was not contacted");
  });

  test("re-checks the scheme after a redirect", async () => {
    await rejects422(
      fetchDocument(`${files.origin}/to-ftp`, options({ allowHosts: [files.hostPort] })),
      /redirected to a ftp URL/,
    );
  });

  test("a redirect without a Location is refused", async () => {
    await rejects422(
      fetchDocument(`${files.origin}/redirect-no-location`, options({ allowHosts: [files.hostPort] })),
      /answered 302 without a Location/,
    );
  });

  test("refuses other schemes, credentials and malformed URLs with 400", async () => {
    await rejects400(fetchDocument("ftp://127.0.0.1/doc.pdf", options()), /http or https, not ftp/);
    await rejects400(fetchDocument("file:///etc/passwd", options()), /http or https, not file/);
    await rejects400(fetchDocument("data:application/pdf;base64,JVBERg==", options()), /http or https/);
    await rejects400(
      fetchDocument(`http://user:secret@${files.hostPort}/doc.pdf`, options({ allowHosts: [files.hostPort] })),
      /credentials/,
    );
    await rejects400(
      fetchDocument(`http://user@${files.hostPort}/doc.pdf`, options({ allowHosts: [files.hostPort] })),
      /credentials/,
    );
    await rejects400(fetchDocument("not a url", options()), /absolute http or https URL/);
    await rejects400(fetchDocument("/relative/doc.pdf", options()), /absolute http or https URL/);
  });

  test("refuses a declared Content-Length over the limit without reading the body", async () => {
    const started = performance.now();
    await rejects422(
      fetchDocument(`${files.origin}/big-declared`, options({ allowHosts: [files.hostPort], maxBytes: 1000 })),
      /larger than 1000 bytes/,
    );
    assert.ok(performance.now() - started < 2000);
  });

  test("aborts a chunked body that grows past the limit", async () => {
    await rejects422(
      fetchDocument(`${files.origin}/big-chunked`, options({ allowHosts: [files.hostPort], maxBytes: 2000 })),
      /larger than 2000 bytes/,
    );
  });

  test("a body exactly at the limit is accepted", async () => {
    const body = await fetchDocument(
      `${files.origin}/doc.pdf`,
      options({ allowHosts: [files.hostPort], maxBytes: DOCUMENT.length }),
    );
    assert.equal(body.length, DOCUMENT.length);
  });

  test("a server that never answers fails within about the timeout", async () => {
    const started = performance.now();
    await rejects422(
      fetchDocument(`${files.origin}/silent`, options({ allowHosts: [files.hostPort], timeoutMs: 300 })),
      /did not answer within 300 ms/,
    );
    const took = performance.now() - started;
    assert.ok(took >= 280 && took < 1500, `took ${took} ms`);
  });

  test("the timeout covers the body too", async () => {
    const started = performance.now();
    await rejects422(
      fetchDocument(`${files.origin}/trickle`, options({ allowHosts: [files.hostPort], timeoutMs: 300 })),
      /did not answer within 300 ms/,
    );
    assert.ok(performance.now() - started < 1500);
  });

  test("a connection closed mid-body is refused", async () => {
    await rejects422(
      fetchDocument(`${files.origin}/truncated`, options({ allowHosts: [files.hostPort] })),
      /closed the connection before sending the whole document/,
    );
  });

  test("a non-2xx answer is refused with its status", async () => {
    await rejects422(
      fetchDocument(`${files.origin}/missing.pdf`, options({ allowHosts: [files.hostPort] })),
      /^The document URL answered 404\.$/,
    );
  });

  test("a refused connection is reported", async () => {
    const closed = await startServer(() => {});
    const port = closed.port;
    await closed.close();
    await rejects422(
      fetchDocument(`http://127.0.0.1:${port}/doc.pdf`, options({ allowHosts: [`127.0.0.1:${port}`] })),
      /refused the connection/,
    );
  });

  test("a host name that does not resolve is refused", async () => {
    await rejects422(
      fetchDocument("http://nonexistent.invalid/doc.pdf", options({ timeoutMs: 3000 })),
      /host \(nonexistent\.invalid\) could not be resolved/,
    );
  });

  test(`a URL over ${MAX_URL_CHARS} characters is a 400 before it is parsed or looked up; one at the limit is fetched`, async () => {
    const path = (length: number) => `/doc.pdf?${"a".repeat(length - files.origin.length - "/doc.pdf?".length)}`;
    await rejects400(fetchDocument(`${files.origin}${path(MAX_URL_CHARS + 1)}`, options({ allowHosts: [files.hostPort] })), new RegExp(`must be at most ${MAX_URL_CHARS} characters`));
    await rejects400(fetchDocument(`http://${"a".repeat(30 * 1024 * 1024)}/`, options()), /must be at most/);
    const atLimit = `${files.origin}${path(MAX_URL_CHARS)}`;
    assert.equal(atLimit.length, MAX_URL_CHARS);
    assert.deepEqual(await fetchDocument(atLimit, options({ allowHosts: [files.hostPort] })), DOCUMENT);
  });

  test("a message repeats only the start of a long host or scheme", async () => {
    const error = await rejects422(fetchDocument(`http://${"a".repeat(8000)}/doc.pdf`, options({ timeoutMs: 3000 })), /host \(a{64}…\) could not be resolved/);
    assert.ok(error.message.length < 200, `a message of ${error.message.length} characters`);
    await rejects400(fetchDocument(`${"x".repeat(5000)}://host/doc.pdf`, options()), /^must use http or https, not x{64}…$/);
  });

  test("a finished fetch does not keep a timer alive", async () => {
    // A leaked 10 s timer would show in this file's duration.
    const body = await fetchDocument(
      `${files.origin}/doc.pdf`,
      options({ allowHosts: [files.hostPort], timeoutMs: 10_000 }),
    );
    assert.deepEqual(body, DOCUMENT);
  });
});
