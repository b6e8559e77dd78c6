import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { after, describe, test } from "node:test";
import { PDFDict, PDFDocument, PDFName, PDFRawStream, PageSizes, degrees } from "pdf-lib";
import { pdfsig } from "../../../test/support/pdf-validators.js";
import {
  AUDIT_TRAIL_CONTINUED_TITLE,
  CERTIFICATE_TITLE,
  appendCertificatePages,
  certificatePageSize,
  loadCertificateFonts,
  summarizeEvent,
  type CertificateAudit,
} from "./certificate-page.js";
import type { AuditEvent } from "../model.js";
import { shaperFor } from "./shaping.js";
import { loadOrCreateLocalKey } from "../keys/local-key.js";
import { signPdf } from "../pdf/pdf-signer.js";

const root = mkdtempSync(join(tmpdir(), "docservice-certificate-page-"));
after(() => rmSync(root, { recursive: true, force: true }));

const SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const FINGERPRINT = "3A:7F:0C:9E:55:12:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD";
const USER_AGENT =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15 " +
  "https://example.com/embedded/frame?session=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef&lang=en";

const EVENTS: AuditEvent[] = [
  { type: "ready", timestamp: new Date("2024-05-01T10:00:00.000Z") },
  { type: "scroll", timestamp: new Date("2024-05-01T10:00:05.250Z"), data: { percent: 80 } },
  {
    type: "field_change",
    timestamp: new Date("2024-05-01T10:00:09.000Z"),
    data: { fieldId: "email", value: "b@example.com", previousValue: "a@example.com" },
  },
  { type: "field_change", timestamp: new Date("2024-05-01T10:00:10.000Z"), data: { fieldId: "city", value: "Москва" } },
  { type: "submit", timestamp: new Date("2024-05-01T10:00:12.000Z") },
];
const SUMMARIES = [
  "Document shown",
  "Scrolled to 80 %",
  "Field “email” changed from “a@example.com” to “b@example.com”",
  "Field “city” set to “Москва”",
  "Submitted",
];

function audit(name: string, overrides: Partial<CertificateAudit> = {}): CertificateAudit {
  return {
    documentId: "evt_2024-05-01_42",
    documentSha256: SHA256,
    signer: { name, email: "signer@example.com", ip: "2001:db8::17", userAgent: USER_AGENT },
    signedAt: new Date("2024-05-01T10:00:13.000Z"),
    certificate: { subject: "CN=DocService Signing, O=Example GmbH, C=DE", sha256Fingerprint: FINGERPRINT },
    events: EVENTS,
    ...overrides,
  };
}

/** Two pages: A4 portrait, then US Letter landscape. */
async function sourceDocument(): Promise<PDFDocument> {
  const document = await PDFDocument.create();
  document.addPage(PageSizes.A4).drawText("first page", { x: 50, y: 700 });
  document.addPage([792, 612]).drawText("last page", { x: 50, y: 500 });
  return document;
}

let saved = 0;
async function save(document: PDFDocument): Promise<string> {
  const file = join(root, `out-${++saved}.pdf`);
  writeFileSync(file, await document.save());
  return file;
}

function text(file: string, first: number, ...options: string[]): string {
  return execFileSync("pdftotext", ["-enc", "UTF-8", ...options, "-f", String(first), file, "-"], { encoding: "utf8" });
}

const compact = (value: string) => value.replace(/\s+/g, "");
const BIDI_MARKS = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

function pageSizes(file: string): string[] {
  const info = execFileSync("pdfinfo", ["-f", "1", "-l", "9999", file], { encoding: "utf8" });
  return [...info.matchAll(/^Page\s+\d+ size:\s+([\d.]+ x [\d.]+) pts/gm)].map((match) => match[1]!);
}

function assertQpdfClean(file: string): void {
  const check = spawnSync("qpdf", ["--check", file], { encoding: "utf8" });
  assert.equal(check.status, 0, `qpdf --check: ${check.stdout}${check.stderr}`);
}

/** Every font on the pages from `first` on: [name, emb, sub, uni]. */
function fonts(file: string, first: number): string[][] {
  const output = execFileSync("pdffonts", ["-f", String(first), file], { encoding: "utf8" });
  return output
    .split("\n")
    .slice(2)
    .filter(Boolean)
    .map((line) => {
      const columns = line.trim().split(/\s+/);
      // name type… encoding emb sub uni objectId generation
      return [columns[0]!, ...columns.slice(-5, -2)];
    });
}

const escape = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function assertEveryField(pageText: string, layoutText: string, expected: CertificateAudit): void {
  const plain = pageText.replace(BIDI_MARKS, "");
  assert.ok(plain.includes(CERTIFICATE_TITLE), "title");
  assert.ok(plain.includes(expected.documentId), "document id");
  assert.ok(plain.includes(expected.documentSha256), "document SHA-256");
  assert.ok(plain.includes(expected.signer.email), "e-mail");
  assert.ok(plain.includes(expected.signer.ip!), "IP");
  assert.ok(compact(plain).includes(compact(expected.signer.userAgent!)), "user agent (wrapped)");
  assert.ok(plain.includes("2024-05-01T10:00:13.000Z"), "signing time in ISO 8601 UTC");
  assert.ok(plain.includes(expected.certificate.subject), "certificate subject");
  assert.ok(compact(plain).includes(compact(expected.certificate.sha256Fingerprint)), "fingerprint");
  // one line per event in -layout mode: number, time, type, summary, in order
  let from = 0;
  expected.events.forEach((event, index) => {
    const row = new RegExp(
      `^\\s*${index + 1}\\s+${escape(event.timestamp.toISOString())}\\s+${event.type}\\s+${escape(SUMMARIES[index]!)}\\s*$`,
      "m",
    );
    const match = row.exec(layoutText.slice(from));
    assert.ok(match, `event ${index + 1} (${event.type}) in order:\n${layoutText}`);
    from += match.index + match[0].length;
  });
}

describe("certificate page", () => {
  const names = [
    { script: "Cyrillic", name: "Анна Каренина" },
    { script: "CJK", name: "山田太郎" },
    { script: "Greek", name: "Ελένη Παπαδοπούλου" },
    { script: "Arabic", name: "محمد عبد الله" },
  ];
  for (const { script, name } of names) {
    test(`every field, with a ${script} signer name, on a page the size of the last page`, async () => {
      const document = await sourceDocument();
      const expected = audit(name);
      const added = await appendCertificatePages(document, expected);
      assert.equal(added, 1);
      assert.equal(document.getPageCount(), 3);
      const file = await save(document);
      assert.deepEqual(pageSizes(file), ["595.28 x 841.89", "792 x 612", "792 x 612"]);
      const pageText = text(file, 3);
      assertEveryField(pageText, text(file, 3, "-layout"), expected);
      // pdftotext gives the Arabic letters back in logical order, between RLE/PDF marks
      const nameLine = pageText.replace(BIDI_MARKS, "").split("\n").find((line) => line.includes(name));
      assert.ok(nameLine, `${script} name "${name}" in:\n${pageText}`);
      assert.doesNotMatch(text(file, 1), /\uFFFD/);
      assertQpdfClean(file);
      const embedded = fonts(file, 3);
      assert.ok(embedded.length >= 2, `fonts: ${JSON.stringify(embedded)}`);
      for (const [fontName, emb, sub, uni] of embedded) {
        assert.match(fontName!, /^[A-Z]{6}\+/, "subset tag");
        assert.deepEqual([emb, sub, uni], ["yes", "yes", "yes"], `${fontName} embedded, subset, ToUnicode`);
      }
      if (script === "CJK") assert.ok(embedded.some(([fontName]) => fontName!.endsWith("+DroidSansFallback")));
      else assert.ok(!embedded.some(([fontName]) => fontName!.endsWith("+DroidSansFallback")), "CJK font only when used");
    });
  }

  test("a mixed-script value renders every character, and the CJK glyphs are drawn", async () => {
    const document = await sourceDocument();
    const name = "Anna Каренина 山田太郎 Ελένη";
    await appendCertificatePages(document, audit(name));
    const file = await save(document);
    assert.ok(text(file, 3).includes(name));
    // the CJK subset must carry glyph outlines: a blank subset (odd-length glyphs under a
    // short loca) renders nothing, so compare ink with and without the CJK name
    const ink = (pdf: string) => {
      const ppm = execFileSync("pdftoppm", ["-f", "3", "-l", "3", "-r", "72", "-gray", pdf], { maxBuffer: 64 << 20 });
      const pixels = ppm.subarray(ppm.length - 792 * 612);
      let dark = 0;
      for (const value of pixels) if (value < 128) dark++;
      return dark;
    };
    const latin = await sourceDocument();
    await appendCertificatePages(latin, audit("Anna Каренина Ελένη"));
    assert.ok(ink(file) > ink(await save(latin)) + 40, "the CJK glyphs add ink");
  });

  test("300 events flow onto further pages, all in order, quickly", async (t) => {
    const events: AuditEvent[] = Array.from({ length: 300 }, (_, i) => ({
      type: "scroll",
      timestamp: new Date(Date.UTC(2024, 4, 1, 11, 0, 0, i * 1000)),
      data: { percent: i % 101 },
    }));
    await appendCertificatePages(await sourceDocument(), audit("Warm Up")); // fonts read once per process
    const document = await sourceDocument();
    const started = performance.now();
    const added = await appendCertificatePages(document, audit("Анна Каренина", { events }));
    const appendMs = performance.now() - started;
    const savedAt = performance.now();
    const file = await save(document);
    const saveMs = performance.now() - savedAt;
    t.diagnostic(`300 events: ${added} pages, append ${appendMs.toFixed(1)} ms, save ${saveMs.toFixed(1)} ms`);
    assert.ok(added >= 4, `${added} pages`);
    assert.ok(appendMs < 2000, `append took ${appendMs} ms`);
    assert.deepEqual(pageSizes(file).slice(2), Array(added).fill("792 x 612"));
    const layoutText = text(file, 3, "-layout");
    let from = 0;
    events.forEach((event, index) => {
      const row = new RegExp(`^\\s*${index + 1}\\s+${escape(event.timestamp.toISOString())}\\s+scroll\\s+Scrolled to ${index % 101} %\\s*$`, "m");
      const match = row.exec(layoutText.slice(from));
      assert.ok(match, `event ${index + 1}`);
      from += match.index + match[0].length;
    });
    const pages = layoutText.split("\f").filter((page) => page.trim());
    assert.equal(pages.length, added);
    for (const [index, page] of pages.entries()) {
      assert.ok(page.includes(`${CERTIFICATE_TITLE} · page ${index + 1} of ${added}`), `footer of page ${index + 1}`);
      if (index > 0) assert.ok(page.includes(AUDIT_TRAIL_CONTINUED_TITLE), `continued header on page ${index + 1}`);
      if (index > 0) assert.match(page, /#\s+Time \(UTC\)\s+Event\s+Details/, `column header on page ${index + 1}`);
    }
    assertQpdfClean(file);
  });

  test("long values wrap inside the page, and long tokens break", async () => {
    const document = await PDFDocument.create();
    document.addPage([300, 420]);
    const longName = `${"Анна Аркадьевна Каренина ".repeat(6)}山田太郎山田太郎山田太郎山田太郎山田太郎山田太郎山田太郎山田太郎`;
    const expected = audit(longName, {
      documentId: "x".repeat(150),
      certificate: { subject: "CN=A very long subject, ".repeat(8), sha256Fingerprint: FINGERPRINT.replaceAll(":", "") },
      events: [
        { type: "field_change", timestamp: new Date("2024-05-01T10:00:00Z"), data: { fieldId: "notes", value: "word ".repeat(80) } },
      ],
    });
    const added = await appendCertificatePages(document, expected);
    const file = await save(document);
    assert.deepEqual(pageSizes(file), Array(added + 1).fill("300 x 420"));
    const plain = compact(text(file, 2));
    const summary = `Field “notes” set to “${"word ".repeat(80).trim()}”`;
    for (const value of [expected.documentId, SHA256, longName, USER_AGENT, expected.certificate.subject, expected.certificate.sha256Fingerprint, summary]) {
      assert.ok(plain.includes(compact(value)), `wrapped value ${value.slice(0, 30)}…`);
    }
    // every word's box stays inside the page
    const boxes = execFileSync("pdftotext", ["-bbox", "-f", "2", file, "-"], { encoding: "utf8" });
    const right = [...boxes.matchAll(/xMax="([\d.]+)"/g)].map((match) => Number(match[1]));
    assert.ok(right.length > 50);
    assert.ok(Math.max(...right) <= 300 - 24 + 0.5, `rightmost word ends at ${Math.max(...right)}`);
    assertQpdfClean(file);
  });

  test("page size: A4 for an empty document, turned pages as shown", async () => {
    const empty = await PDFDocument.create();
    assert.deepEqual(certificatePageSize(empty), PageSizes.A4);
    assert.equal(await appendCertificatePages(empty, audit("Anna")), 1);
    assert.deepEqual(pageSizes(await save(empty)), ["595.28 x 841.89"]);

    const turned = await PDFDocument.create();
    turned.addPage([612, 792]).setRotation(degrees(90));
    assert.deepEqual(certificatePageSize(turned), [792, 612]);

    const tiny = await PDFDocument.create();
    tiny.addPage([144, 72]);
    assert.deepEqual(certificatePageSize(tiny), PageSizes.A4);
  });

  test("optional signer fields are left out, odd input is drawn safely", async () => {
    const document = await sourceDocument();
    await appendCertificatePages(
      document,
      audit("Eve\u202Egnp.exe\u0000 Tab\tName 😀", {
        signer: { name: "Eve\u202Egnp.exe\u0000 Tab\tName 😀", email: "eve@example.com" },
        events: [],
      }),
    );
    const file = await save(document);
    const pageText = text(file, 3);
    assert.ok(!pageText.includes("IP address"));
    assert.ok(!pageText.includes("User agent"));
    assert.ok(pageText.includes("Evegnp.exe Tab Name"), "bidi override and controls removed");
    assert.ok(pageText.includes("No events were recorded."));
    assertQpdfClean(file);
  });
});

/** The embedded font programs (FontFile2 streams, as stored) of a saved PDF, by font name. */
async function fontPrograms(file: string): Promise<Map<string, Buffer>> {
  const document = await PDFDocument.load(readFileSync(file));
  const programs = new Map<string, Buffer>();
  for (const [, object] of document.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict) || object.get(PDFName.of("Type")) !== PDFName.of("FontDescriptor")) continue;
    const program = object.lookup(PDFName.of("FontFile2"));
    assert.ok(program instanceof PDFRawStream, "a FontFile2 stream");
    programs.set(object.get(PDFName.of("FontName"))!.toString().slice(1), Buffer.from(program.getContents()));
  }
  return programs;
}

describe("certificate page fonts", () => {
  test("text is shaped as fontkit lays it out, also where the cmap shortcut applies", async () => {
    const fonts = await loadCertificateFonts();
    const samples = [
      "Document SHA-256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "Certificate fingerprint of the official office workflow (ff fi fl ffi ffl)",
      "Zoë Ünal, Łukasz Żółć, Ærøskøbing «quoted» — “typographic” ‘marks’ … · • €",
      "Анна Каренина, Ελένη Παπαδοπούλου, soft\u00ADhyphen, 1\u20442",
      "محمد عبد الله 2024",
      "山田太郎 한국어 Ω≈ç√",
      "e\u0301 a\u0308 (combining marks)",
    ];
    for (const face of Object.values(fonts)) {
      const shaper = shaperFor(face.font);
      for (const text of samples) {
        for (const piece of [text, ...text.split(" ")]) {
          const expected = face.font.layout(piece).glyphs.map((glyph) => [glyph.id, glyph.advanceWidth]);
          const shaped = shaper.shape(piece).map((glyph) => [glyph.id, glyph.advance]);
          assert.deepEqual(shaped, expected, `${face.name}: ${piece}`);
        }
      }
    }
  });

  test("Latin text reuses one shared subset per face; other scripts get a small subset of their own", async () => {
    const programs = [];
    for (const name of ["Jane Doe", "Zoë Ünal-Fiffield", "Анна Каренина"]) {
      const document = await sourceDocument();
      // events without the Cyrillic one
      await appendCertificatePages(document, audit(name, { documentId: `doc-${name.length}`, events: EVENTS.slice(0, 3) }));
      const file = await save(document);
      assert.ok(text(file, 3).includes(name), `${name} extracts`);
      programs.push(await fontPrograms(file));
    }
    const [first, second, cyrillic] = programs;
    const shared = [...first!.keys()];
    assert.equal(shared.length, 2, `regular and bold: ${shared.join(", ")}`);
    for (const name of shared) {
      assert.ok(second!.get(name)!.equals(first!.get(name)!), `${name}: the same subset in both Latin documents`);
      assert.ok(first!.get(name)!.length < 40_000, `${name}: a subset (${first!.get(name)!.length} bytes deflated), not the whole font`);
    }
    const own = [...cyrillic!.keys()].filter((name) => !first!.has(name));
    assert.equal(own.length, 1, `one document subset for the Cyrillic glyphs: ${[...cyrillic!.keys()].join(", ")}`);
    assert.match(own[0]!, /^[A-Z]{6}\+DejaVuSans$/);
    assert.ok(cyrillic!.get(own[0]!)!.length < 15_000, "the document's own subset holds only its glyphs");
  });

  test("a certificate page appended by the incremental signer: a valid signature, the page intact", async () => {
    const key = await loadOrCreateLocalKey(join(root, "key"));
    const source = Buffer.from(await (await sourceDocument()).save());
    const expected = audit("Anna Каренина 山田太郎");
    const file = join(root, "signed.pdf");
    const signed = await signPdf(source, key, {
      signerName: "Anna",
      signingTime: expected.signedAt,
      pages: async (document, size) => void (await appendCertificatePages(document, expected, size)),
    });
    assert.ok(signed.subarray(0, source.length).equals(source), "the original bytes are kept");
    writeFileSync(file, signed);
    const result = await pdfsig(file);
    assert.equal(result.signatures.length, 1, result.raw);
    assert.ok(result.signatures[0]!.valid && result.signatures[0]!.totalDocumentSigned, result.raw);
    assertEveryField(text(file, 3), text(file, 3, "-layout"), expected);
    assertQpdfClean(file);
  });
});

describe("event summaries", () => {
  test("read as sentences", () => {
    EVENTS.forEach((event, index) => assert.equal(summarizeEvent(event), SUMMARIES[index]));
    assert.equal(summarizeEvent({ type: "scroll", timestamp: new Date(), data: {} }), "Scrolled");
    assert.equal(
      summarizeEvent({ type: "field_change", timestamp: new Date(), data: { fieldId: "agree", value: true, previousValue: false } }),
      "Field “agree” changed from “false” to “true”",
    );
    assert.equal(
      summarizeEvent({ type: "submit", timestamp: new Date(), data: { button: "Sign" } }),
      "Submitted; button: Sign",
    );
    const long = summarizeEvent({ type: "field_change", timestamp: new Date(), data: { fieldId: "f", value: "x".repeat(2000) } });
    assert.ok(long.endsWith("… (1500 more characters)”"));
  });
});
