import assert from "node:assert/strict";
import { credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ConversionServiceClient, OutputFormat, PdfaLevel, SourceFormat, type ConvertHeader, type ConvertResponse } from "../../gen/ts-proto/docservice/v1/conversion.js";
import { AnnotateRequest, AnnotationServiceClient, type AnnotateResponse } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { remoteHealthCheck } from "../../services/grpc/grpc-health-client.js";
import { inlineText, paragraph, templateDocx } from "../support/docx-templates.js";
import { makeDocx } from "../support/docx-fixtures.js";
import { call, codeIn } from "../support/key-flow.js";
import { freePort } from "../support/ports.js";
import { answers, plaintextTransport, startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";
import { corpusFile } from "../support/corpus.js";
import { docxFileText } from "../support/docx-text.js";
import { sampleValues } from "../support/metrics-text.js";
import { describePdfAResult, validatePdfA } from "../support/verapdf.js";

const docx = corpusFile("word_tables.docx");

/** Streams a document through ConversionService.Convert and collects the answer. */
function convertOverGrpc(
  client: ConversionServiceClient,
  apiKey: string,
  document: Buffer,
  sourceFormat: SourceFormat,
  target: Partial<Pick<ConvertHeader, "outputFormat" | "pdfa" | "pdfua">> = {},
): Promise<{ header: ConvertResponse["header"]; pdf: Buffer }> {
  return new Promise((resolve, reject) => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${apiKey}`);
    const stream = client.convert(metadata);
    const parts: Buffer[] = [];
    let header: ConvertResponse["header"];
    stream.on("data", (message: ConvertResponse) => (message.header ? (header = message.header) : parts.push(Buffer.from(message.chunk!))));
    stream.on("error", reject);
    stream.on("end", () => resolve({ header, pdf: Buffer.concat(parts) }));
    const untargeted = { outputFormat: OutputFormat.OUTPUT_FORMAT_UNSPECIFIED, pdfa: PdfaLevel.PDFA_LEVEL_UNSPECIFIED, pdfua: false };
    stream.write({ header: { sourceFormat, filename: "tables.docx", sizeBytes: document.length, ...untargeted, ...target } });
    for (let offset = 0; offset < document.length; offset += 64 * 1024) stream.write({ chunk: document.subarray(offset, offset + 64 * 1024) });
    stream.end();
  });
}

// ConversionService as its own process: reached by the gateway over gRPC, and by an internal caller with the ts-proto client.
describe("conversion in split mode", () => {
  let dataDir: string;
  let conversion: ServiceProcess;
  let keys: ServiceProcess;
  let gateway: ServiceProcess;
  let client: ConversionServiceClient;
  let annotation: AnnotationServiceClient;
  let conversionAddress: string;
  let base: string;
  let metrics: string;
  let apiKey: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "docservice-split-"));
    const [conversionPort, keysPort, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    metrics = `http://127.0.0.1:${metricsPort}`;
    conversionAddress = `127.0.0.1:${conversionPort}`;
    const keysAddress = `127.0.0.1:${keysPort}`;
    const common = { HOST: "127.0.0.1", DOCSERVICE_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
    const serving = (address: string, name: string) => {
      const check = remoteHealthCheck(address, name, 1000, plaintextTransport);
      return () => check().then(() => true);
    };
    [conversion, keys] = await Promise.all([
      // KEYS_SERVICE_ADDR: internal callers of Convert present API keys, which it checks with KeyService.
      startService("conversion", { ...common, GRPC_PORT: String(conversionPort), CONVERSION_POOL_SIZE: "1", KEYS_SERVICE_ADDR: keysAddress, METRICS_PORT: String(metricsPort) }, serving(conversionAddress, "docservice.v1.ConversionService")),
      startService("keys", { ...common, GRPC_PORT: String(keysPort) }, serving(keysAddress, "docservice.v1.KeyService")),
    ]);
    base = `http://127.0.0.1:${httpPort}`;
    gateway = await startService(
      "gateway",
      { ...common, PORT: String(httpPort), KEYS_SERVICE_ADDR: keysAddress, CONVERSION_SERVICE_ADDR: conversionAddress },
      () => answers(`${base}/v1/health`),
    );
    await call(base, "/v1/auth/register?email=split@example.test");
    const outbox = join(dataDir, "outbox");
    const mail = readFileSync(join(outbox, readdirSync(outbox)[0]), "utf8").replace(/=\n/g, "");
    apiKey = (await call(base, `/v1/auth/verify?email=split@example.test&code=${codeIn(mail)}`)).body.apiKey;
    client = new ConversionServiceClient(conversionAddress, credentials.createInsecure());
    annotation = new AnnotationServiceClient(conversionAddress, credentials.createInsecure());
  });

  after(async () => {
    client?.close();
    annotation?.close();
    await Promise.all([gateway?.stop(), keys?.stop(), conversion?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("the gateway converts through ConversionService over gRPC", async () => {
    const form = new FormData();
    form.append("file", new Blob([docx]), "tables.docx");
    const response = await fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form, headers: { Authorization: `Bearer ${apiKey}` } });
    assert.equal(response.status, 200);
    assert.equal(Buffer.from(await response.arrayBuffer()).subarray(0, 5).toString(), "%PDF-");
    const health = await call(base, "/v1/health");
    assert.deepEqual(Object.keys(health.body.backends).sort(), ["annotation", "conversion", "keys"]);
  });

  test("the conversion role serves /health and its saturation on METRICS_PORT: conversions waiting and in flight while three share one instance, none after, and the time they were held", async () => {
    const gauge = async (name: string) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, "m").exec(await (await fetch(`${metrics}/metrics`)).text())?.[1]);
    assert.equal((await fetch(`${metrics}/health`)).status, 200);
    assert.equal(await gauge("docservice_conversion_pool_size"), 1);
    const convert = () => {
      const form = new FormData();
      form.append("file", new Blob([docx]), "tables.docx");
      return fetch(`${base}/v1/convert?from=docx`, { method: "POST", body: form, headers: { Authorization: `Bearer ${apiKey}` } }).then((response) => response.status);
    };
    const heldBefore = await gauge("docservice_conversion_held_seconds_total");
    const started = performance.now();
    const conversions = Promise.all([convert(), convert(), convert()]);
    let seen = { waiting: 0, inFlight: 0 };
    let settled = false;
    void conversions.finally(() => (settled = true));
    while (!settled) {
      const [waiting, inFlight] = await Promise.all([gauge("docservice_conversion_waiting"), gauge("docservice_conversion_in_flight")]);
      seen = { waiting: Math.max(seen.waiting, waiting), inFlight: Math.max(seen.inFlight, inFlight) };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(await conversions, [200, 200, 200]);
    const wallSeconds = (performance.now() - started) / 1000;
    assert.equal(seen.inFlight, 1, "one instance converts one document at a time");
    assert.ok(seen.waiting >= 1, `the others waited for it (${JSON.stringify(seen)})`);
    // an instance is busy a little after its answer (its files removed, its memory checked)
    await waitFor(async () => (await gauge("docservice_conversion_waiting")) === 0 && (await gauge("docservice_conversion_in_flight")) === 0, {
      what: "no conversion waiting or in flight once all were answered",
      timeoutMs: 5_000,
    });
    // three held at first, one at the end: more than the batch took, less than three times it; nothing more at rest
    const held = (await gauge("docservice_conversion_held_seconds_total")) - heldBefore;
    assert.ok(held > wallSeconds && held < 3 * wallSeconds, `${held.toFixed(2)} s held by the three conversions of a batch that took ${wallSeconds.toFixed(2)} s`);
    const atRest = await gauge("docservice_conversion_held_seconds_total");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await gauge("docservice_conversion_held_seconds_total"), atRest);
  });

  test("the conversion role counts each gRPC call by method and code, and each conversion by outcome", async () => {
    const text = await (await fetch(`${metrics}/metrics`)).text();
    const convert = { service: "docservice.v1.ConversionService", method: "Convert" };
    // the four conversions of the tests above, each a Convert stream from the gateway
    assert.equal(sampleValues(text, "docservice_grpc_server_handled_total", { ...convert, code: "OK" })[0], 4);
    assert.equal(sampleValues(text, "docservice_grpc_server_handling_seconds_count", convert)[0], 4);
    assert.equal(sampleValues(text, "docservice_conversions_total", { source: "docx", target: "pdf", outcome: "converted" })[0], 4);
  });

  test("an internal caller streams a document with the ts-proto client", async () => {
    const { header, pdf } = await convertOverGrpc(client, apiKey, docx, SourceFormat.SOURCE_FORMAT_DOCX);
    assert.equal(header?.contentType, "application/pdf");
    assert.equal(header?.filename, "tables.pdf");
    assert.ok((header?.pageCount ?? 0) > 0);
    assert.equal(header?.sizeBytes, pdf.length);
    assert.equal(pdf.subarray(0, 5).toString(), "%PDF-");
  });

  test("documents over gRPC's 4 MB default message size go through", async () => {
    const large = makeDocx(["A document with a large embedded part."], { "word/media/blob.bin": randomBytes(6 * 1024 * 1024) });
    assert.ok(large.length > 6 * 1024 * 1024);
    const { pdf } = await convertOverGrpc(client, apiKey, large, SourceFormat.SOURCE_FORMAT_DOCX);
    assert.equal(pdf.subarray(0, 5).toString(), "%PDF-");
  });

  test("a wrong document type keeps its meaning over gRPC", async () => {
    await assert.rejects(convertOverGrpc(client, apiKey, Buffer.from("%PDF-1.7 not a docx"), SourceFormat.SOURCE_FORMAT_DOCX), (error: ServiceError) => {
      assert.equal(error.code, status.INVALID_ARGUMENT);
      assert.equal(error.metadata.get("docservice-error-code")[0], "UNSUPPORTED_MEDIA_TYPE");
      return true;
    });
    await assert.rejects(convertOverGrpc(client, apiKey, docx, SourceFormat.SOURCE_FORMAT_UNSPECIFIED), (error: ServiceError) => error.code === status.INVALID_ARGUMENT);
  });

  test("PDF/A-2b and DOCX output over gRPC: veraPDF passes the PDF; the DOCX holds the text", async () => {
    const { header, pdf } = await convertOverGrpc(client, apiKey, docx, SourceFormat.SOURCE_FORMAT_DOCX, { pdfa: PdfaLevel.PDFA_LEVEL_2B });
    assert.equal(header?.contentType, "application/pdf");
    const verdict = await validatePdfA(pdf, "2b");
    assert.ok(verdict.compliant, describePdfAResult(verdict));

    const html = Buffer.from("<!doctype html><html><body><h1>Over gRPC</h1><p>Paragraph in a Word file.</p></body></html>");
    const converted = await convertOverGrpc(client, apiKey, html, SourceFormat.SOURCE_FORMAT_HTML, { outputFormat: OutputFormat.OUTPUT_FORMAT_DOCX });
    assert.equal(converted.header?.contentType, "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    assert.equal(converted.header?.filename, "tables.docx");
    assert.match(docxFileText(converted.pdf), /Over gRPC[\s\S]*Paragraph in a Word file\./);
  });

  test("a target the rules refuse keeps its meaning over gRPC: DOCX from DOCX, PDF/A of a DOCX output", async () => {
    for (const target of [{ outputFormat: OutputFormat.OUTPUT_FORMAT_DOCX }, { outputFormat: OutputFormat.OUTPUT_FORMAT_DOCX, pdfa: PdfaLevel.PDFA_LEVEL_3B }]) {
      await assert.rejects(convertOverGrpc(client, apiKey, docx, SourceFormat.SOURCE_FORMAT_DOCX, target), (error: ServiceError) => {
        assert.equal(error.code, status.INVALID_ARGUMENT);
        assert.equal(error.metadata.get("docservice-error-code")[0], "VALIDATION_ERROR");
        return true;
      });
    }
  });

  test("AnnotationService runs beside ConversionService: a template filled over gRPC with an API key, the same rules (422 naming the field), no key refused", async () => {
    const template = templateDocx(paragraph("Dear ", inlineText("name", "name", 1), ","));
    const annotate = (request: AnnotateRequest, key = apiKey) =>
      new Promise<AnnotateResponse>((resolve, reject) => {
        const metadata = new Metadata();
        if (key) metadata.set("authorization", `Bearer ${key}`);
        annotation.annotate(request, metadata, (error, response) => (error ? reject(error) : resolve(response!)));
      });
    const field = { id: "name", group: "", type: "text", value: "Grace", rows: [], keepTextNodeStyles: false, copyRowStyle: false, width: 0, height: 0 };
    const filled = await annotate(AnnotateRequest.fromPartial({ document: { content: template }, fields: [field], toPdf: true }));
    assert.equal(filled.contentType, "application/pdf");
    assert.equal(Buffer.from(filled.document).subarray(0, 5).toString(), "%PDF-");

    await assert.rejects(annotate(AnnotateRequest.fromPartial({ document: { content: template }, fields: [{ ...field, id: "nobody" }] })), (error: ServiceError) => {
      assert.equal(error.metadata.get("docservice-error-code")[0], "UNPROCESSABLE_DOCUMENT");
      assert.match(error.details, /fields\[0\]\.id: no content control is tagged "nobody"/);
      return true;
    });
    await assert.rejects(annotate(AnnotateRequest.fromPartial({ document: { content: template }, fields: [field] }), ""), (error: ServiceError) => error.code === status.UNAUTHENTICATED);
  });
});
