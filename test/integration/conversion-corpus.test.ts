import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { classifyDocx, docxBodyText, docxText, docxTokens, recall, tokenize, tokenizeWithGaps, type DocxClass, type TokenStream } from "../support/docx-text.js";
import { startGotenberg, type Gotenberg } from "../support/gotenberg.js";
import { pageCount, pdfText, qpdfCheck } from "../support/pdf-tools.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { CORPUS_DIR, corpusDocxPaths } from "../support/corpus.js";

// Every .docx of the shared corpus through POST /v1/convert?from=docx, once per
// conversion backend. A document this test classifies as good (from its bytes,
// independently of the service) must become a valid PDF holding its words; a
// document classified as bad must get the documented 4xx. Never a 5xx.

const CORPUS = CORPUS_DIR;
const MIN_RECALL = 0.95;

type BackendName = "local" | "gotenberg";

/**
 * Readable DOCX packages that a backend does not convert, each for the reason
 * observed and written here. Each must get a 422 saying the converter could
 * not convert it: not a 5xx, and not a 200 either (if one starts converting,
 * take it off this list).
 */
const KNOWN_UNCONVERTIBLE: Record<string, { backends: BackendName[]; reason: string }> = {
  // Broken or hostile documents that LibreOffice 7.4 refuses to load, also with `soffice --convert-to`.
  "libreoffice/math-malformed_xml.docx": {
    backends: ["local", "gotenberg"],
    reason: "word/document.xml is not well-formed XML: an <m:t> is closed by </m:sPre>",
  },
  "poi/ExternalEntityInText.docx": {
    backends: ["local", "gotenberg"],
    reason: "word/document.xml has a DOCTYPE declaring an external entity (an XXE probe)",
  },
};

const unconvertible = (name: string, backend: BackendName) => KNOWN_UNCONVERTIBLE[name]?.backends.includes(backend) ?? false;

/**
 * Converted documents whose PDF is known to lack some words of the DOCX, with
 * exactly the tokens that go missing and why; any other loss still fails.
 */
const KNOWN_TEXT_LOSS: Record<string, { missing: string[]; reason: string }> = {
  "poi/clusterfuzz-testcase-minimized-POIXWPFFuzzer-6733884933668864.docx": {
    missing: ["new", "line"],
    reason: 'LibreOffice drops the <w:br/> in "new<w:br/>line" inside a multi-line plain-text content control and prints "newline"',
  },
};

interface CorpusDocument {
  name: string;
  bytes: Buffer;
  class: DocxClass;
  /** Tokens of the DOCX body; none for bad documents. */
  tokens: TokenStream;
}

const corpus: CorpusDocument[] = corpusDocxPaths()
  .map((path) => {
    const bytes = readFileSync(path);
    const docClass = classifyDocx(bytes);
    return { name: relative(CORPUS, path), bytes, class: docClass, tokens: docClass.kind === "docx" ? docxTokens(docxText(docClass)) : { tokens: [], gaps: [] } };
  });

/** What a bad document must get: the documented status and a message saying why. */
const REFUSALS: Record<Exclude<DocxClass["kind"], "docx">, { status: number; message: RegExp }> = {
  encrypted: { status: 422, message: /encrypted/ },
  malformed: { status: 422, message: /damaged|truncated|could not convert/ },
  odf: { status: 415, message: /OpenDocument.*from=odt/ },
  ole2: { status: 415, message: /from=doc/ },
  foreign: { status: 415, message: /not DOCX|not a ZIP/ },
};

interface Outcome {
  status: number;
  pages?: number;
  recall?: number;
  found?: number;
  total?: number;
  rejoined?: number;
  missing?: string[];
  ms: number;
}

interface Backend {
  name: BackendName;
  concurrency: number;
  outcomes: Map<string, Outcome>;
  startupMs: number;
  conversionMs: number;
}

const backends: Backend[] = [
  { name: "local", concurrency: 2, outcomes: new Map(), startupMs: 0, conversionMs: 0 },
  { name: "gotenberg", concurrency: 1, outcomes: new Map(), startupMs: 0, conversionMs: 0 },
];

test("the corpus holds documents of every class, classified from their bytes", () => {
  const count = (kind: DocxClass["kind"]) => corpus.filter((doc) => doc.class.kind === kind).length;
  assert.ok(corpus.length >= 100, `${corpus.length} documents in ${CORPUS}`);
  for (const kind of ["docx", "encrypted", "malformed", "odf"] as const) assert.ok(count(kind) > 0, `no ${kind} document`);
  for (const name of [...Object.keys(KNOWN_UNCONVERTIBLE), ...Object.keys(KNOWN_TEXT_LOSS)]) {
    assert.equal(corpus.find((doc) => doc.name === name)?.class.kind, "docx", `${name} is listed as an exception but is not a readable DOCX of the corpus`);
  }
  console.log(`corpus: ${corpus.length} documents: ${["docx", "encrypted", "malformed", "odf", "ole2", "foreign"].map((k) => `${count(k as DocxClass["kind"])} ${k}`).join(", ")}`);
});

test("the text measure: what counts as a DOCX word, and what finds it in a PDF", () => {
  const body = (xml: string) =>
    docxBodyText(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${xml}</w:body></w:document>`);
  const run = (text: string, properties = "") => `<w:r>${properties && `<w:rPr>${properties}</w:rPr>`}<w:t xml:space="preserve">${text}</w:t></w:r>`;
  const field = (instruction: string, result: string) =>
    `<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> ${instruction} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>${run(result)}<w:r><w:fldChar w:fldCharType="end"/></w:r>`;
  assert.equal(
    body(
      `<w:p>${run("Fish &amp; chips ")}${run("secret", "<w:vanish/>")}${run("shown", '<w:vanish w:val="0"/>')}<w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>` +
        `<w:p><w:pPr><w:rPr><w:vanish/></w:rPr></w:pPr>${run("para")}<w:r><w:tab/></w:r>${run("graph")}</w:p>` +
        `<w:p>${field("DATE", "4/24/2016")}${field("REF x", "kept")}<w:fldSimple w:instr=" PAGE ">${run("7")}</w:fldSimple></w:p>` +
        `<w:p><w:r><mc:AlternateContent><mc:Choice><w:txbxContent><w:p>${run("box")}</w:p></w:txbxContent></mc:Choice><mc:Fallback><w:txbxContent><w:p>${run("box")}</w:p></w:txbxContent></mc:Fallback></mc:AlternateContent></w:r></w:p>`,
    ).replace(/\s+/g, " "),
    "Fish & chips shown para graph kept box ",
  );
  const noted = docxTokens(body(`<w:p>${run("Foo")}<w:r><w:footnoteReference w:id="2"/></w:r>${run(" bar, Ростова-на-Дону")}</w:p>`));
  assert.deepEqual(noted.tokens, ["foo", "bar", "ростованадону"]);
  const pdf = (text: string) => recall(noted, tokenizeWithGaps(text));
  assert.equal(pdf("Foo1 bar Ростова-на-\nДону").recall, 1, "a glued note mark; a compound pdftotext joined at a line end");
  assert.equal(pdf("Foo bar Ростова-на-Дону").recall, 1);
  assert.deepEqual(pdf("Fo\no bar Ростова-\nна-Дону"), { found: 3, total: 3, recall: 1, rejoined: 2, missing: [] }, "words broken across lines");
  assert.deepEqual(pdf("Foo. Ростова-на-Дону").missing, ["bar"]);
  assert.deepEqual(tokenize("Ｆｉ ﬁle 日本語 한국"), ["fi", "file", "日", "本", "語", "한", "국"]);
});

for (const backend of backends) {
  describe(`the DOCX corpus through /v1/convert (${backend.name} backend)`, () => {
    let platform: Platform | undefined;
    let gotenberg: Gotenberg | undefined;
    let scratch: string;

    before(
      async () => {
        const started = performance.now();
        scratch = mkdtempSync(join(tmpdir(), `docservice-corpus-${backend.name}-`));
        if (backend.name === "gotenberg") {
          gotenberg = await startGotenberg();
          platform = await startPlatform({ CONVERSION_BACKEND: "gotenberg", GOTENBERG_URL: gotenberg.url });
        } else {
          platform = await startPlatform({ CONVERSION_BACKEND: "local", CONVERSION_POOL_SIZE: "2" });
        }
        backend.startupMs = performance.now() - started;
      },
      { timeout: 120_000 },
    );

    after(async () => {
      await platform?.stop();
      await gotenberg?.stop();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    describe("every document", { concurrency: backend.concurrency }, () => {
      let started = 0;
      before(() => void (started = performance.now()));
      after(() => void (backend.conversionMs = performance.now() - started));

      for (const doc of corpus) {
        test(`${doc.name} (${doc.class.kind})`, { timeout: 300_000 }, async () => {
          const requested = performance.now();
          const response = await convertFile(platform!, doc.bytes, basename(doc.name), "docx");
          const outcome: Outcome = { status: response.status, ms: 0 };
          backend.outcomes.set(doc.name, outcome);
          try {
            if (doc.class.kind === "docx" && !unconvertible(doc.name, backend.name)) {
              await assertConverted(doc, response, outcome, join(scratch, `${doc.name.replace(/[/\\]/g, "__")}.pdf`));
            } else {
              const why = doc.class.kind === "docx" ? `known unconvertible: ${KNOWN_UNCONVERTIBLE[doc.name].reason}` : `${doc.class.kind}: ${doc.class.reason}`;
              const expected = doc.class.kind === "docx" ? { status: 422, message: /could not convert/ } : REFUSALS[doc.class.kind];
              const body = await response.text();
              assert.ok(response.status < 500, `${doc.name} (${why}): ${response.status} ${body}`);
              assert.equal(response.status, expected.status, `${doc.name} (${why}): ${response.status} ${body}`);
              assert.match(response.headers.get("content-type") ?? "", /application\/json/);
              const error = JSON.parse(body) as { code?: unknown; message?: unknown };
              assert.equal(typeof error.code, "string", body);
              assert.match(String(error.message), expected.message, `${doc.name} (${why}): ${body}`);
            }
          } finally {
            outcome.ms = performance.now() - requested;
          }
        });
      }
    });

  });
}

async function assertConverted(doc: CorpusDocument, response: Response, outcome: Outcome, file: string): Promise<void> {
  if (response.status !== 200) {
    assert.fail(`${doc.name} is a readable DOCX but got ${response.status}: ${await response.text()}`);
  }
  assert.equal(response.headers.get("content-type"), "application/pdf");
  const pdf = Buffer.from(await response.arrayBuffer());
  await writeFile(file, pdf);
  const check = await qpdfCheck(file);
  assert.equal(check.code, 0, `qpdf --check ${doc.name}: exit ${check.code}\n${check.stdout}${check.stderr}`);
  const pages = await pageCount(file);
  outcome.pages = pages;
  assert.ok(pages > 0, `${doc.name}: ${pages} pages`);
  assert.equal(response.headers.get("x-page-count"), String(pages), `${doc.name}: X-Page-Count`);
  const measured = recall(doc.tokens, tokenizeWithGaps(await pdfText(file)), 1000);
  Object.assign(outcome, { recall: measured.recall, found: measured.found, total: measured.total, rejoined: measured.rejoined, missing: measured.missing });
  const known = KNOWN_TEXT_LOSS[doc.name];
  if (known) {
    assert.deepEqual(measured.missing, known.missing, `${doc.name}: known loss (${known.reason}) changed`);
  } else {
    assert.ok(
      measured.recall >= MIN_RECALL,
      `${doc.name}: recall ${measured.recall.toFixed(3)} (${measured.found}/${measured.total}); missing e.g. ${measured.missing.slice(0, 20).join(" ")}`,
    );
  }
}

test("page counts of the two backends are identical", () => {
  const [local, gotenberg] = backends;
  const differences: string[] = [];
  let compared = 0;
  for (const [name, a] of local.outcomes) {
    const b = gotenberg.outcomes.get(name);
    if (a.pages === undefined || b?.pages === undefined) continue;
    compared++;
    if (a.pages !== b.pages) differences.push(`${name}: local ${a.pages}, gotenberg ${b.pages}`);
  }
  console.log(`page counts compared for ${compared} documents; ${differences.length} differ`);
  assert.ok(compared >= 90, `only ${compared} documents converted on both backends`);
  assert.deepEqual(differences, [], "both backends lay out every document on the same number of pages");
});

after(() => {
  const rows = backends.map((backend) => {
    const outcomes = [...backend.outcomes.values()];
    const recalls = outcomes.filter((o) => o.recall !== undefined && o.total! > 0).map((o) => o.recall!);
    return {
      backend: backend.name,
      documents: outcomes.length,
      converted: outcomes.filter((o) => o.status === 200).length,
      "4xx": outcomes.filter((o) => o.status >= 400 && o.status < 500).length,
      "5xx": outcomes.filter((o) => o.status >= 500).length,
      "min recall": recalls.length ? Math.min(...recalls).toFixed(3) : "-",
      "startup s": (backend.startupMs / 1000).toFixed(1),
      "conversions s": (backend.conversionMs / 1000).toFixed(1),
    };
  });
  console.log("\nDOCX corpus summary");
  console.table(rows);
  for (const backend of backends) {
    const imperfect = [...backend.outcomes].filter(([, o]) => o.recall !== undefined && o.recall < 1).sort(([, a], [, b]) => a.recall! - b.recall!);
    const rejoined = [...backend.outcomes].filter(([, o]) => o.rejoined);
    console.log(`${backend.name}: recall < 1 for ${imperfect.length} documents; worst:`);
    for (const [name, o] of imperfect.slice(0, 5)) console.log(`  ${o.recall!.toFixed(3)} ${o.found}/${o.total} ${name}; missing: ${o.missing!.slice(0, 20).join(" ")}`);
    console.log(`  words found only rejoined across line breaks: ${rejoined.map(([name, o]) => `${name} ${o.rejoined}`).join(", ") || "none"}`);
    const slowest = [...backend.outcomes].sort(([, a], [, b]) => b.ms - a.ms).slice(0, 3);
    console.log(`  slowest: ${slowest.map(([name, o]) => `${name} ${(o.ms / 1000).toFixed(1)} s`).join(", ")}`);
  }
});
