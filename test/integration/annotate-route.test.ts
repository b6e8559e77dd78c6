// POST /v1/annotate in embedded mode with the real LibreOffice pool: templates
// with Word content controls (test/support/docx-templates.ts) filled, the
// result read back by LibreOffice (its text in pdftotext, its image in
// pdfimages), a table grown by its rows, annotate → sign → verify in one go,
// and every kind of bad request.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Code, createClient, type ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { AnnotationService } from "../../gen/es/docservice/v1/annotation_pb.js";
import { contractTemplate, solidPng } from "../support/docx-templates.js";
import { pdfText, tool } from "../support/pdf-tools.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { postJson, signBody, signedPdfOf } from "../support/sign-requests.js";

const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

const contract = contractTemplate();

const SIGNATURE = solidPng(320, 120, [20, 40, 160]);

const fields = [
  { id: "customer", type: "text", value: "Ada Lovelace" },
  { id: "terms", type: "text", value: "Payment within 30 days.\nNo refunds after delivery." },
  { group: "place", type: "text", value: "Zürich" },
  { id: "signature", type: "signature", value: `data:image/png;base64,${SIGNATURE.toString("base64")}` },
  { id: "items", type: "table", value: [["Training", "800"], ["Travel", "150"]], options: { copyRowStyle: true } },
];

describe("POST /v1/annotate", () => {
  let platform: Platform;
  let scratch: string;
  let templates: Server;
  let templatesHost: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "docservice-annotate-"));
    // the template served over HTTP on loopback, which DOCUMENT_FETCH_ALLOW_HOSTS lets document.url reach
    templates = createServer((request, response) => {
      if (request.url === "/contract.docx") response.writeHead(200, { "Content-Type": "application/octet-stream" }).end(contract);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => templates.listen(0, "127.0.0.1", resolve));
    templatesHost = `127.0.0.1:${(templates.address() as AddressInfo).port}`;
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "1", DOCUMENT_FETCH_ALLOW_HOSTS: templatesHost });
  });

  after(async () => {
    await platform?.stop();
    templates?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const annotate = (body: unknown, to = "") => postJson(platform.base, `/v1/annotate${to ? `?to=${to}` : ""}`, body, platform.apiKey);

  async function pdfFacts(pdf: Buffer, name: string): Promise<{ text: string; images: string }> {
    const file = join(scratch, name);
    writeFileSync(file, pdf);
    const images = await tool("pdfimages", ["-list", file]);
    return { text: (await pdfText(file)).replace(/\s+/g, " "), images: images.stdout };
  }

  test("the filled DOCX: LibreOffice reads it, with the text, the header, the table's new rows and the signature image", async () => {
    const result = await annotate({ document: { base64: contract.toString("base64") }, fields });
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(result.body.document.contentType, DOCX_TYPE);
    const docx = Buffer.from(result.body.document.base64, "base64");

    const converted = await convertFile(platform, docx, "filled.docx", "docx");
    assert.equal(converted.status, 200, "LibreOffice could not read the filled DOCX");
    const { text, images } = await pdfFacts(Buffer.from(await converted.arrayBuffer()), "filled.pdf");
    // (pdftotext reads the table column by column)
    for (const expected of ["Customer: Ada Lovelace", "Payment within 30 days. No refunds after delivery.", "Signed in Zürich", "Office: Zürich", "Consulting Training Travel", "1200 800 150"]) {
      assert.ok(text.includes(expected), `"${expected}" is not in the PDF: ${text}`);
    }
    assert.doesNotMatch(text, /Click to enter|Terms go here|city/);
    // the 320×120 signature, not the 4×4 placeholder
    assert.match(images, /\n\s*1\s+\d+\s+image\s+320\s+120\s/, images);
    assert.doesNotMatch(images, /\s4\s+4\s+rgb/);
  });

  test("Connect and gRPC-Web clients annotate through the gateway, with the API key, and the same template fills the same way", async () => {
    const request = {
      document: { source: { case: "content" as const, value: contract } },
      fields: [
        { id: "customer", type: "text", value: "Ada Lovelace" },
        { id: "items", type: "table", rows: [{ cells: ["Training", "800"] }], copyRowStyle: true },
      ],
    };
    for (const transport of [createConnectTransport({ baseUrl: platform.base, httpVersion: "1.1" }), createGrpcWebTransport({ baseUrl: platform.base, httpVersion: "1.1" })]) {
      const annotation = createClient(AnnotationService, transport);
      await assert.rejects(annotation.annotate(request), (error: ConnectError) => error.code === Code.Unauthenticated);
      const filled = await annotation.annotate(request, { headers: { Authorization: `Bearer ${platform.apiKey}` } });
      assert.equal(filled.contentType, DOCX_TYPE);
      const converted = await convertFile(platform, Buffer.from(filled.document), "connect.docx", "docx");
      assert.equal(converted.status, 200, "LibreOffice could not read the filled DOCX");
      const { text } = await pdfFacts(Buffer.from(await converted.arrayBuffer()), "connect.pdf");
      for (const expected of ["Customer: Ada Lovelace", "Training", "800"]) assert.ok(text.includes(expected), `"${expected}" is not in the PDF: ${text}`);
    }
  });

  test("to=pdf, then the PDF signed and verified in one go", async () => {
    const result = await annotate({ document: { base64: contract.toString("base64") }, fields }, "pdf");
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(result.body.document.contentType, "application/pdf");
    const pdf = Buffer.from(result.body.document.base64, "base64");
    const { text } = await pdfFacts(pdf, "annotated.pdf");
    assert.ok(text.includes("Customer: Ada Lovelace"), text);

    const signed = signedPdfOf(await postJson(platform.base, "/v1/sign", signBody(pdf), platform.apiKey));
    const verified = await postJson(platform.base, "/v1/verify", { document: { base64: signed.toString("base64") } }, platform.apiKey);
    assert.equal(verified.status, 200);
    assert.equal(verified.body.valid, true, verified.body.reason);
  });

  test("a signature drawn from the signer's name, with labels: an image in the PDF, wider than tall", async () => {
    const result = await annotate(
      {
        document: { base64: contract.toString("base64") },
        fields: [{ id: "signature", type: "signature", options: { signerName: "Jane Doe", topLabel: "Signed by", bottomLabel: "2026-11-25" } }],
      },
      "pdf",
    );
    assert.equal(result.status, 200, JSON.stringify(result.body));
    const { images } = await pdfFacts(Buffer.from(result.body.document.base64, "base64"), "drawn.pdf");
    const [width, height] = /\n\s*1\s+\d+\s+image\s+(\d+)\s+(\d+)\s/.exec(images)!.slice(1).map(Number);
    assert.ok(width > height && width > 100, images);
  });

  test("a template by URL: fetched under the SSRF rules; a missing one and a metadata address are 422s", async () => {
    const fetched = await annotate({ document: { url: `http://${templatesHost}/contract.docx` }, fields: [{ id: "customer", type: "text", value: "By URL" }] });
    assert.equal(fetched.status, 200, JSON.stringify(fetched.body));
    assert.equal(fetched.body.document.contentType, DOCX_TYPE);
    const missing = await annotate({ document: { url: `http://${templatesHost}/nothing.docx` }, fields: [{ id: "customer", type: "text", value: "x" }] });
    assert.equal(missing.status, 422, JSON.stringify(missing.body));
    assert.match(missing.body.message, /document URL.*404/);
    const metadata = await annotate({ document: { url: "http://169.254.169.254/latest/meta-data" }, fields: [{ id: "customer", type: "text", value: "x" }] });
    assert.equal(metadata.status, 422, JSON.stringify(metadata.body));
  });

  test("nothing is half-filled: every field that does not fit the template is a 422 naming it", async () => {
    const result = await annotate({
      document: { base64: contract.toString("base64") },
      fields: [
        { id: "customer", type: "text", value: "fits" },
        { id: "nobody", type: "text", value: "x" },
        { id: "signature", type: "text", value: "x" },
        { id: "agreed", type: "text", value: "x" },
        { id: "signature", type: "image", value: Buffer.from("not an image at all").toString("base64") },
      ],
    });
    assert.equal(result.status, 422, JSON.stringify(result.body));
    assert.equal(result.body.code, "UNPROCESSABLE_DOCUMENT");
    assert.deepEqual(result.body.details.map((d: { field: string }) => d.field), ["fields[1].id", "fields[2].type", "fields[3].type", "fields[4].value"]);
  });

  test("bad requests: a template that is not a DOCX (415), malformed fields and `to` (400, every problem), no API key (401)", async () => {
    const pdf = await annotate({ document: { base64: Buffer.from("%PDF-1.7 not a template").toString("base64") }, fields: [{ id: "a", type: "text", value: "x" }] });
    assert.equal(pdf.status, 415, JSON.stringify(pdf.body));

    const malformed = await annotate({
      document: { base64: contract.toString("base64") },
      fields: [{ type: "text", value: "x" }, { id: "items", type: "table", value: "not rows" }, { id: "a", group: "b", type: "colour", value: 1 }],
    });
    assert.equal(malformed.status, 400, JSON.stringify(malformed.body));
    const issues = malformed.body.details.map((d: { field: string }) => d.field);
    for (const field of ["fields[0]", "fields[1].value", "fields[2].type", "fields[2].value"]) assert.ok(issues.includes(field), `${field} not in ${issues}`);

    const to = await annotate({ document: { base64: contract.toString("base64") }, fields }, "odt");
    assert.equal(to.status, 400);
    assert.equal(to.body.details[0].field, "to");

    const anonymous = await postJson(platform.base, "/v1/annotate", { document: { base64: contract.toString("base64") }, fields });
    assert.equal(anonymous.status, 401);
  });
});
