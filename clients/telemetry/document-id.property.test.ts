import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { strToU8, zipSync, type Zippable } from "fflate";
import { computeDocumentId } from "./index.js";
import { CUSTOM_XML_HEAD, expectedId } from "./test/docx.js";

// Property tests of computeDocumentId: any bytes, any ZIP, any damaged DOCX give an id of the
// documented form without throwing, the same id every time and for every byte container; and
// a package that carries a GUID and a created time gets the id of "<guid>|<created>" (the
// oracle is the crc-32 package, independent of the client's CRC).

const NUM_RUNS = 200;
const ID = /^HASH-[0-9A-F]{8}$/;

/** computeDocumentId must not throw, must be deterministic and the same for a Uint8Array, a Buffer and an ArrayBuffer. */
function idOf(bytes: Uint8Array) {
  const first = computeDocumentId(bytes);
  assert.match(first.documentId, ID);
  assert.ok(first.documentCreatedAt === null || typeof first.documentCreatedAt === "string");
  assert.ok(first.documentGuid === null || typeof first.documentGuid === "string");
  assert.deepEqual(computeDocumentId(bytes), first, "deterministic");
  assert.deepEqual(computeDocumentId(Buffer.from(bytes)), first, "same for a Buffer");
  assert.deepEqual(computeDocumentId(bytes.slice().buffer), first, "same for an ArrayBuffer");
  return first;
}

const SETTINGS = (guid: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml"><w:zoom w:percent="100"/><w15:docId w15:val="{${guid}}"/></w:settings>`;
const CUSTOM = (guid: string) =>
  `${CUSTOM_XML_HEAD}<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="DocumentGuid"><vt:lpwstr>${guid}</vt:lpwstr></property></Properties>`;
const CORE = (created: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>x</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">${created}</dcterms:created></cp:coreProperties>`;

const guid = fc.uuid().map((u) => u.toUpperCase());
const created = fc.date({ min: new Date("1980-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z"));
/** Text that is not well-formed XML, or XML of another shape. */
const junkXml = fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom("<a>", "<?xml version='1.0'?><x/>", "<w:settings><w15:docId/></w:settings>", "<Properties><property name=\"DocumentGuid\"/></Properties>", "&amp;<"));
const level = fc.constantFrom(0, 1, 6, 9) as fc.Arbitrary<0 | 1 | 6 | 9>;

/** A DOCX-like ZIP: a GUID in settings and/or custom properties, a created time or not, junk parts, any compression. */
const packageParts = fc.record({
  settingsGuid: fc.option(guid, { nil: undefined }),
  customGuid: fc.option(guid, { nil: undefined }),
  created: fc.option(created, { nil: undefined }),
  junk: fc.dictionary(fc.constantFrom("word/settings.xml", "docProps/core.xml", "docProps/custom.xml", "word/document.xml", "[Content_Types].xml", "other/part.bin"), junkXml, { maxKeys: 3 }),
  level,
});

type PackageSpec = typeof packageParts extends fc.Arbitrary<infer T> ? T : never;

function zipOf(parts: PackageSpec): { bytes: Uint8Array; guid: string | undefined; created: string | undefined } {
  const files: Zippable = {};
  for (const [name, text] of Object.entries(parts.junk)) files[name] = strToU8(text);
  if (parts.settingsGuid) files["word/settings.xml"] = strToU8(SETTINGS(parts.settingsGuid));
  if (parts.customGuid) files["docProps/custom.xml"] = strToU8(CUSTOM(parts.customGuid));
  if (parts.created) files["docProps/core.xml"] = strToU8(CORE(parts.created));
  const bytes = zipSync(files, { level: parts.level });
  // w15:docId wins over the custom property (the reference client's order)
  return { bytes, guid: parts.settingsGuid ?? parts.customGuid, created: parts.created };
}

describe("computeDocumentId (fast-check)", () => {
  test("any bytes: an id of the documented form, deterministic; bytes that are not a ZIP hash as themselves", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
        const id = idOf(bytes);
        if (!(bytes[0] === 0x50 && bytes[1] === 0x4b)) assert.equal(id.documentId, expectedId(bytes));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("generated packages: with a GUID and a created time the id is CRC-32 of '<guid>|<created>', else of the bytes", () => {
    fc.assert(
      fc.property(packageParts, (parts) => {
        const { bytes, guid, created } = zipOf(parts);
        const id = idOf(bytes);
        if (guid && created) {
          assert.deepEqual(id, { documentId: expectedId(`${guid}|${created}`), documentCreatedAt: created, documentGuid: guid });
        } else if (!Object.keys(parts.junk).some((name) => name.startsWith("word/settings") || name.startsWith("docProps/"))) {
          assert.equal(id.documentId, expectedId(bytes));
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("damaged packages (bytes changed, truncated, cut and joined): never throws, deterministic", () => {
    const damaged = fc
      .tuple(packageParts, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 8 }), fc.option(fc.nat(), { nil: undefined }))
      .map(([parts, flips, cut]) => {
        const bytes = zipOf(parts).bytes.slice();
        for (const [at, xor] of flips) bytes[at % bytes.length]! ^= xor;
        return cut === undefined ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
      });
    fc.assert(fc.property(damaged, (bytes) => void idOf(bytes)), { numRuns: NUM_RUNS });
  });
});
