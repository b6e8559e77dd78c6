/**
 * Integration: LibreOffice still opens stamped files, renders the same text,
 * and reads the stamped DocumentGuid and creation date. Skipped when soffice
 * or pdftotext is not installed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { strFromU8, unzipSync } from "fflate";
import { stampDocument } from "./index.js";
import { corpusDocx } from "./test/docx.js";

const installed = (command: string, flag: string) => spawnSync(command, [flag], { stdio: "ignore", timeout: 60_000 }).status === 0;
const available = installed("soffice", "--version") && installed("pdftotext", "-v");

const GUID = "5e0ae0b2-54a3-4f4c-9d0e-3f1f4a3c1a77";
const DOCUMENTS = ["korean_alignment_autospace.docx", "ComplexNumberedLists.docx", "WordWithAttachments.docx"];

function soffice(profile: string, format: string, outdir: string, files: string[]): void {
  const result = spawnSync(
    "soffice",
    [`-env:UserInstallation=${pathToFileURL(profile).href}`, "--headless", "--convert-to", format, "--outdir", outdir, ...files],
    { encoding: "utf8", timeout: 240_000 },
  );
  assert.equal(result.status, 0, `soffice --convert-to ${format}: ${result.stderr}`);
}

test("LibreOffice opens stamped files unchanged in text and reads the stamped metadata", { skip: !available && "soffice or pdftotext not installed", timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "telemetry-stamp-lo-"));
  try {
    const [original, stamped, pdf, odt] = ["original", "stamped", "pdf", "odt"].map((name) => join(dir, name));
    for (const folder of [original, stamped]) mkdirSync(folder!);
    for (const name of DOCUMENTS) {
      writeFileSync(join(original!, `o-${name}`), corpusDocx(name));
      writeFileSync(join(stamped!, `s-${name}`), stampDocument(corpusDocx(name), { documentGuid: GUID, now: new Date("2026-01-02T03:04:05Z") }));
    }
    const originals = DOCUMENTS.map((name) => join(original!, `o-${name}`));
    const stampedFiles = DOCUMENTS.map((name) => join(stamped!, `s-${name}`));
    soffice(join(dir, "profile"), "pdf", pdf!, [...originals, ...stampedFiles]);
    soffice(join(dir, "profile"), "odt", odt!, stampedFiles);

    for (const name of DOCUMENTS) {
      const base = name.replace(/\.docx$/, "");
      const text = (file: string) => spawnSync("pdftotext", [file, "-"], { encoding: "utf8" }).stdout;
      const before = text(join(pdf!, `o-${base}.pdf`));
      assert.ok(before.trim().length > 0, `${name} has text`);
      assert.equal(text(join(pdf!, `s-${base}.pdf`)), before, `${name}: same text after stamping`);

      const meta = strFromU8(unzipSync(readFileSync(join(odt!, `s-${base}.odt`)))["meta.xml"]!);
      assert.match(meta, new RegExp(`<meta:user-defined meta:name="DocumentGuid"[^>]*>${GUID}</meta:user-defined>`), `${name}: DocumentGuid`);
      assert.match(meta, /<meta:creation-date>\d{4}-\d\d-\d\dT/, `${name}: creation date`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
