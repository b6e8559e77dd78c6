// /v1/convert from=docx, doc, odt and rtf must not make LibreOffice read
// anything outside the document (server-side request forgery, local file
// disclosure). Each document below points, by one mechanism its format has,
// at a local HTTP server that records every request, and at files of this
// machine; it is converted by the real LibreOffice pool in embedded mode (to
// PDF, and from DOC, ODT and RTF to DOCX too), and by Gotenberg (to PDF; 8.31
// fetched the DOCX linked picture, 8.34.0 does not). Nothing may be
// requested, nothing of those files may end up in the output, and the
// document's own text stays. The DOC and DOCX cases also go through the cold
// `soffice --convert-to` fallback of the pool, on its profile.
//
// What is looked for in the output: the text LEAKEDMARKER (every remote
// resource and every local file holds it), and images: the server's PNG is
// 8×8 pixels, the local file's 6×6, so an image of either size is a fetched
// resource (only the OLE cases have an image of their own, 4×4); an embedded
// object is one when it holds the marker text.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import CFB from "cfb";
import { strToU8, unzipSync, zipSync, type Zippable } from "fflate";
import { after, before, describe, test } from "node:test";
import { solidPng } from "../support/docx-templates.js";
import { convertCold } from "../../services/conversion/cold-conversion.js";
import { PDF } from "../../services/conversion/convert-target.js";
import { libreOfficeExport } from "../../services/conversion/libreoffice-export.js";
import { formatByName } from "../../services/conversion/source-format.js";
import { docFromDocx } from "../support/written-by-libreoffice.js";
import { docxFileText } from "../support/docx-text.js";
import { startGotenberg } from "../support/gotenberg.js";
import { pdfText, tool } from "../support/pdf-tools.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { freePort } from "../support/ports.js";

const LEAK = "LEAKEDMARKER";
const REMOTE_PNG = solidPng(8, 8, [220, 20, 20]);
const LOCAL_PNG = solidPng(6, 6, [20, 160, 20]);
const OWN_PNG = solidPng(4, 4, [20, 20, 200]);

const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const W_NAMESPACES = [
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"',
  `xmlns:r="${REL}"`,
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"',
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"',
  'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"',
  'xmlns:v="urn:schemas-microsoft-com:vml"',
  'xmlns:o="urn:schemas-microsoft-com:office:office"',
].join(" ");

const xmlEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const para = (text: string) => `<w:p><w:r><w:t xml:space="preserve">${xmlEscape(text)}</w:t></w:r></w:p>`;

interface Relationship {
  id: string;
  type: string;
  target: string;
  external?: boolean;
}

const relationships = (rels: Relationship[]) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels
    .map((rel) => `<Relationship Id="${rel.id}" Type="${REL}/${rel.type}" Target="${xmlEscape(rel.target)}"${rel.external ? ' TargetMode="External"' : ""}/>`)
    .join("")}</Relationships>`;

/** A DOCX: `body` (WordprocessingML of w:body), its relationships, and optional settings, web settings and other parts. */
function docx(options: {
  body: string;
  rels?: Relationship[];
  settings?: string;
  settingsRels?: Relationship[];
  webSettings?: string;
  webSettingsRels?: Relationship[];
  parts?: Record<string, Uint8Array>;
}): Buffer {
  const rels = [...(options.rels ?? [])];
  const overrides = ['<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'];
  const parts: Zippable = {};
  if (options.settings !== undefined) {
    rels.push({ id: "rIdSettings", type: "settings", target: "settings.xml" });
    overrides.push('<Override PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"/>');
    parts["word/settings.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:settings ${W_NAMESPACES}>${options.settings}</w:settings>`);
    if (options.settingsRels) parts["word/_rels/settings.xml.rels"] = strToU8(relationships(options.settingsRels));
  }
  if (options.webSettings !== undefined) {
    rels.push({ id: "rIdWebSettings", type: "webSettings", target: "webSettings.xml" });
    overrides.push('<Override PartName="/word/webSettings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.webSettings+xml"/>');
    parts["word/webSettings.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:webSettings ${W_NAMESPACES}>${options.webSettings}</w:webSettings>`);
    if (options.webSettingsRels) parts["word/_rels/webSettings.xml.rels"] = strToU8(relationships(options.webSettingsRels));
  }
  parts["[Content_Types].xml"] = strToU8(
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Default Extension="html" ContentType="text/html"/><Default Extension="bin" ContentType="application/vnd.openxmlformats-officedocument.oleObject"/>${overrides.join("")}</Types>`,
  );
  parts["_rels/.rels"] = strToU8(relationships([{ id: "rId1", type: "officeDocument", target: "word/document.xml" }]));
  parts["word/document.xml"] = strToU8(
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W_NAMESPACES}><w:body>${options.body}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`,
  );
  parts["word/_rels/document.xml.rels"] = strToU8(relationships(rels));
  Object.assign(parts, options.parts ?? {});
  return Buffer.from(zipSync(parts));
}

/** An ODT of `body` (office:text content), with automatic styles, settings.xml items and meta.xml content. */
function odt(options: { body: string; styles?: string; settings?: string; meta?: string }): Buffer {
  const ns = [
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"',
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"',
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"',
    'xmlns:xlink="http://www.w3.org/1999/xlink"',
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"',
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"',
    'xmlns:config="urn:oasis:names:tc:opendocument:xmlns:config:1.0"',
  ].join(" ");
  const parts: Zippable = {
    mimetype: [strToU8("application/vnd.oasis.opendocument.text"), { level: 0 }],
    "META-INF/manifest.xml": strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>${options.settings ? '<manifest:file-entry manifest:full-path="settings.xml" manifest:media-type="text/xml"/>' : ""}${options.meta ? '<manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>' : ""}</manifest:manifest>`,
    ),
    "content.xml": strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ns} office:version="1.3"><office:automatic-styles>${options.styles ?? ""}</office:automatic-styles><office:body><office:text>${options.body}</office:text></office:body></office:document-content>`,
    ),
  };
  if (options.settings) {
    parts["settings.xml"] = strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><office:document-settings ${ns} office:version="1.3"><office:settings><config:config-item-set config:name="ooo:configuration-settings">${options.settings}</config:config-item-set></office:settings></office:document-settings>`,
    );
  }
  if (options.meta) parts["meta.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8"?><office:document-meta ${ns} office:version="1.3"><office:meta>${options.meta}</office:meta></office:document-meta>`);
  return Buffer.from(zipSync(parts));
}

/** Links updated always, as far as the document decides (the worst a sender can ask for). */
const ODT_UPDATE_LINKS_ALWAYS = '<config:config-item config:name="LinkUpdateMode" config:type="short">2</config:config-item>';

/** An RTF file of `body` (RTF after the header). */
const rtf = (body: string) => Buffer.from(`{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Liberation Serif;}}\n${body}\n}\n`, "latin1");

/** Word's field, the complex way (begin, instruction, separate, result, end), in a paragraph. */
const complexField = (instruction: string, result = "old field result") =>
  `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ${xmlEscape(instruction)} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>${result}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`;
const simpleField = (instruction: string, result = "old field result") =>
  `<w:p><w:fldSimple w:instr=" ${xmlEscape(instruction)} "><w:r><w:t>${result}</w:t></w:r></w:fldSimple></w:p>`;

const linkedPicture = (rId: string, id: number) =>
  `<w:p><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="952500" cy="952500"/><wp:docPr id="${id}" name="Linked picture ${id}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="${id}" name="linked${id}.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="${rId}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
const vmlPicture = (rId: string, id: number) =>
  `<w:p><w:r><w:pict><v:shape id="_x0000_s${1024 + id}" type="#_x0000_t75" style="width:75pt;height:75pt"><v:imagedata r:id="${rId}" o:title=""/></v:shape></w:pict></w:r></w:p>`;
const oleLink = (rId: string, previewId: string, id: number) =>
  `<w:p><w:r><w:object w:dxaOrig="1440" w:dyaOrig="1440"><v:shape id="_x0000_i${1024 + id}" type="#_x0000_t75" style="width:72pt;height:72pt" o:ole=""><v:imagedata r:id="${previewId}" o:title=""/></v:shape><o:OLEObject Type="Link" ProgID="Word.Document.12" ShapeID="_x0000_i${1024 + id}" DrawAspect="Content" r:id="${rId}" UpdateMode="Always"><o:LinkType>EnhancedMetaFile</o:LinkType><o:LockedField>false</o:LockedField><o:FieldCodes>\\f 0</o:FieldCodes></o:OLEObject></w:object></w:r></w:p>`;

interface Case {
  name: string;
  from: "docx" | "doc" | "odt" | "rtf";
  /** The document, pointing at `web` (the recording server) and `file(name)` (a file of this machine). */
  build(web: string, file: (name: string) => string): Buffer | Promise<Buffer>;
  /** The document has an image of its own (4×4). */
  ownImage?: boolean;
}

const visible = (name: string) => `Visible text of ${name}.`;
const visibleText = (testCase: Case) => new RegExp(visible(testCase.name).replace(/\./g, "\\."));

const CASES: Case[] = [
  {
    name: "docx-drawing-blip-link",
    from: "docx",
    build: (web, file) =>
      docx({
        body: para(visible("docx-drawing-blip-link")) + linkedPicture("rIdHttp", 1) + linkedPicture("rIdFile", 2),
        rels: [
          { id: "rIdHttp", type: "image", target: `${web}/docx-drawing-blip-link.png`, external: true },
          { id: "rIdFile", type: "image", target: file("secret.png"), external: true },
        ],
      }),
  },
  {
    name: "docx-vml-imagedata",
    from: "docx",
    build: (web, file) =>
      docx({
        body: para(visible("docx-vml-imagedata")) + vmlPicture("rIdHttp", 1) + vmlPicture("rIdFile", 2),
        rels: [
          { id: "rIdHttp", type: "image", target: `${web}/docx-vml-imagedata.png`, external: true },
          { id: "rIdFile", type: "image", target: file("secret.png"), external: true },
        ],
      }),
  },
  {
    name: "docx-includepicture-fields",
    from: "docx",
    build: (web, file) =>
      docx({
        body:
          para(visible("docx-includepicture-fields")) +
          simpleField(`INCLUDEPICTURE "${web}/docx-includepicture-simple.png" \\d`) +
          complexField(`INCLUDEPICTURE "${web}/docx-includepicture-complex.png" \\* MERGEFORMATINET`) +
          simpleField(`INCLUDEPICTURE "${file("secret.png")}" \\d`) +
          complexField(`INCLUDEPICTURE "${file("secret.png")}"`),
        settings: '<w:updateFields w:val="true"/>',
      }),
  },
  {
    name: "docx-includetext-link-dde-fields",
    from: "docx",
    build: (web, file) =>
      docx({
        body:
          para(visible("docx-includetext-link-dde-fields")) +
          simpleField(`INCLUDETEXT "${web}/docx-includetext-simple.txt"`) +
          complexField(`INCLUDETEXT "${web}/docx-includetext-complex.docx"`) +
          simpleField(`INCLUDETEXT "${file("secret.txt")}"`) +
          complexField(`INCLUDETEXT "${file("secret.docx")}"`) +
          complexField(`LINK Word.Document.12 "${file("secret.docx")}" "" \\a \\t`) +
          complexField(`LINK Word.Document.12 "${web}/docx-link-field.docx" "" \\a \\t`) +
          complexField(`DDEAUTO soffice "${file("secret.odt")}" ""`) +
          complexField(`IMPORT "${web}/docx-import-field.png"`),
        settings: '<w:updateFields w:val="true"/>',
      }),
  },
  {
    name: "docx-attached-template",
    from: "docx",
    build: (web) =>
      docx({
        body: para(visible("docx-attached-template")),
        settings: '<w:attachedTemplate r:id="rIdTemplate"/><w:linkStyles/>',
        settingsRels: [{ id: "rIdTemplate", type: "attachedTemplate", target: `${web}/docx-attached-template.dotx`, external: true }],
      }),
  },
  {
    name: "docx-attached-template-file",
    from: "docx",
    build: (_web, file) =>
      docx({
        body: para(visible("docx-attached-template-file")),
        settings: '<w:attachedTemplate r:id="rIdTemplate"/><w:linkStyles/>',
        settingsRels: [{ id: "rIdTemplate", type: "attachedTemplate", target: file("secret.docx"), external: true }],
      }),
  },
  {
    name: "docx-subdocument",
    from: "docx",
    build: (web, file) =>
      docx({
        body: para(visible("docx-subdocument")) + '<w:p><w:subDoc r:id="rIdHttp"/></w:p><w:p><w:subDoc r:id="rIdFile"/></w:p>',
        rels: [
          { id: "rIdHttp", type: "subDocument", target: `${web}/docx-subdocument.docx`, external: true },
          { id: "rIdFile", type: "subDocument", target: file("secret.docx"), external: true },
        ],
      }),
  },
  {
    name: "docx-altchunk-external",
    from: "docx",
    build: (web, file) =>
      docx({
        body: para(visible("docx-altchunk-external")) + '<w:altChunk r:id="rIdHttp"/><w:altChunk r:id="rIdFile"/>' + para("After the chunks."),
        rels: [
          { id: "rIdHttp", type: "aFChunk", target: `${web}/docx-altchunk-external.html`, external: true },
          { id: "rIdFile", type: "aFChunk", target: file("secret.html"), external: true },
        ],
      }),
  },
  {
    // an HTML part inside the DOCX goes through LibreOffice's HTML import, which fetches what the page references
    name: "docx-altchunk-html-part",
    from: "docx",
    build: (web, file) =>
      docx({
        body: para(visible("docx-altchunk-html-part")) + '<w:altChunk r:id="rIdChunk"/>' + para("After the chunk."),
        rels: [{ id: "rIdChunk", type: "aFChunk", target: "chunk.html" }],
        parts: {
          "word/chunk.html": strToU8(
            `<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="stylesheet" href="${web}/docx-altchunk-html-part.css"></head><body><p>Chunk text.</p><img src="${web}/docx-altchunk-html-part.png" width="20" height="20"><img src="${file("secret.png")}" width="20" height="20"><iframe src="${file("secret.html")}"></iframe></body></html>`,
          ),
        },
      }),
  },
  {
    // a hyperlink is followed by the reader, never fetched while converting
    name: "docx-hyperlink",
    from: "docx",
    build: (web) =>
      docx({
        body: `${para(visible("docx-hyperlink"))}<w:p><w:hyperlink r:id="rIdLink"><w:r><w:t>a link</w:t></w:r></w:hyperlink></w:p>`,
        rels: [{ id: "rIdLink", type: "hyperlink", target: `${web}/docx-hyperlink-target.html`, external: true }],
      }),
  },
  {
    name: "docx-ole-link",
    from: "docx",
    ownImage: true,
    build: (web, file) =>
      docx({
        body: para(visible("docx-ole-link")) + oleLink("rIdOleHttp", "rIdPreview", 1) + oleLink("rIdOleFile", "rIdPreview", 2),
        rels: [
          { id: "rIdPreview", type: "image", target: "media/preview.png" },
          { id: "rIdOleHttp", type: "oleObject", target: `${web}/docx-ole-link.docx`, external: true },
          { id: "rIdOleFile", type: "oleObject", target: file("secret.odt"), external: true },
        ],
        parts: { "word/media/preview.png": new Uint8Array(OWN_PNG) },
      }),
  },
  {
    name: "docx-frameset",
    from: "docx",
    build: (web, file) =>
      docx({
        body: para(visible("docx-frameset")),
        webSettings: '<w:frameset><w:frame><w:name w:val="Remote"/><w:sourceFileName r:id="rIdHttp"/></w:frame><w:frame><w:name w:val="Local"/><w:sourceFileName r:id="rIdFile"/></w:frame></w:frameset>',
        webSettingsRels: [
          { id: "rIdHttp", type: "frame", target: `${web}/docx-frameset.docx`, external: true },
          { id: "rIdFile", type: "frame", target: file("secret.docx"), external: true },
        ],
      }),
  },
  {
    name: "doc-includepicture",
    from: "doc",
    build: (web, file) =>
      docLinkingTo(
        docx({
          body: para(visible("doc-includepicture")) + linkedPicture("rIdHttp", 1) + linkedPicture("rIdFile", 2),
          rels: [
            { id: "rIdHttp", type: "image", target: `${web}/doc-includepicture.png`, external: true },
            { id: "rIdFile", type: "image", target: file("secret.png"), external: true },
          ],
        }),
        [`INCLUDEPICTURE  "${web}/doc-includepicture.png"`, `INCLUDEPICTURE  "${file("secret.png")}"`],
      ),
  },
  {
    name: "doc-includetext-link-fields",
    from: "doc",
    build: (web, file) =>
      docLinkingTo(
        docx({
          body:
            para(visible("doc-includetext-link-fields")) +
            complexField(`INCLUDETEXT "${web}/doc-includetext.txt"`) +
            complexField(`INCLUDETEXT "${file("secret.txt")}"`) +
            complexField(`LINK Word.Document.12 "${web}/doc-link-field.docx" "" \\a \\t`) +
            complexField(`LINK Word.Document.12 "${file("secret.docx")}" "" \\a \\t`),
        }),
        [`INCLUDETEXT "${web}/doc-includetext.txt"`, `INCLUDETEXT "${file("secret.txt")}"`, `LINK Word.Document.12 "${web}/doc-link-field.docx"`, `LINK Word.Document.12 "${file("secret.docx")}"`],
      ),
  },
  {
    name: "odt-draw-image",
    from: "odt",
    build: (web, file) =>
      odt({
        body: `<text:p>${visible("odt-draw-image")}</text:p>${[`${web}/odt-draw-image.png`, file("secret.png")]
          .map(
            (href, i) =>
              `<text:p><draw:frame draw:name="Linked${i}" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm"><draw:image xlink:href="${xmlEscape(href)}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>`,
          )
          .join("")}`,
        settings: ODT_UPDATE_LINKS_ALWAYS,
      }),
  },
  {
    name: "odt-background-image",
    from: "odt",
    build: (web, file) =>
      odt({
        styles: [`${web}/odt-background-image.png`, file("secret.png")]
          .map(
            (href, i) =>
              `<style:style style:name="Bg${i}" style:family="paragraph"><style:paragraph-properties><style:background-image xlink:href="${xmlEscape(href)}" xlink:type="simple" xlink:actuate="onLoad" style:repeat="stretch"/></style:paragraph-properties></style:style>`,
          )
          .join(""),
        body: `<text:p>${visible("odt-background-image")}</text:p><text:p text:style-name="Bg0">Remote background.</text:p><text:p text:style-name="Bg1">Local background.</text:p>`,
        settings: ODT_UPDATE_LINKS_ALWAYS,
      }),
  },
  {
    name: "odt-section-source",
    from: "odt",
    build: (web, file) =>
      odt({
        body: `<text:p>${visible("odt-section-source")}</text:p>${[
          [`${web}/odt-section-source.odt`, "writer8"],
          [file("secret.odt"), "writer8"],
          [file("secret.txt"), "Text (encoded)"],
        ]
          .map(
            ([href, filter], i) =>
              `<text:section text:name="Linked${i}"><text:section-source xlink:href="${xmlEscape(href)}" xlink:type="simple" xlink:show="embed" text:filter-name="${filter}"/><text:p>old section text</text:p></text:section>`,
          )
          .join("")}`,
        settings: ODT_UPDATE_LINKS_ALWAYS,
      }),
  },
  {
    name: "odt-object-link",
    from: "odt",
    build: (web, file) =>
      odt({
        body: `<text:p>${visible("odt-object-link")}</text:p>${[`${web}/odt-object-link.odt`, file("secret.odt")]
          .map(
            (href, i) =>
              `<text:p><draw:frame draw:name="Object${i}" text:anchor-type="as-char" svg:width="4cm" svg:height="2cm"><draw:object xlink:href="${xmlEscape(href)}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>`,
          )
          .join("")}`,
        settings: ODT_UPDATE_LINKS_ALWAYS,
      }),
  },
  {
    name: "odt-template",
    from: "odt",
    build: (web) =>
      odt({
        body: `<text:p>${visible("odt-template")}</text:p>`,
        meta: `<meta:template xlink:type="simple" xlink:actuate="onRequest" xlink:title="Remote" xlink:href="${web}/odt-template.ott" meta:date="2020-01-01T00:00:00"/>`,
        settings: ODT_UPDATE_LINKS_ALWAYS,
      }),
  },
  {
    name: "rtf-includepicture",
    from: "rtf",
    build: (web, file) =>
      rtf(
        [
          `\\pard ${visible("rtf-includepicture")}\\par`,
          `\\pard {\\field{\\*\\fldinst INCLUDEPICTURE "${web}/rtf-includepicture.png" \\\\d \\\\* MERGEFORMATINET}{\\fldrslt }}\\par`,
          `\\pard {\\field{\\*\\fldinst INCLUDEPICTURE "${file("secret.png")}" \\\\d}{\\fldrslt }}\\par`,
          `\\pard {\\field{\\*\\fldinst INCLUDEPICTURE "${file("secret.png")}"}{\\fldrslt }}\\par`,
        ].join("\n"),
      ),
  },
  {
    name: "rtf-includetext",
    from: "rtf",
    build: (web, file) =>
      rtf(
        [
          `\\pard ${visible("rtf-includetext")}\\par`,
          `\\pard {\\field{\\*\\fldinst INCLUDETEXT "${web}/rtf-includetext.txt"}{\\fldrslt old field result}}\\par`,
          `\\pard {\\field{\\*\\fldinst INCLUDETEXT "${file("secret.txt")}"}{\\fldrslt old field result}}\\par`,
          `\\pard {\\field{\\*\\fldinst LINK Word.Document.12 "${file("secret.docx")}" "" \\\\a \\\\t}{\\fldrslt old field result}}\\par`,
        ].join("\n"),
      ),
  },
  {
    name: "rtf-object-link",
    from: "rtf",
    build: (web, file) =>
      rtf(
        [
          `\\pard ${visible("rtf-object-link")}\\par`,
          ...[`${web}/rtf-object-link.docx`, file("secret.odt")].map(
            (target) => `\\pard {\\object\\objautlink\\rsltpict\\objw1440\\objh1440{\\*\\objclass Word.Document.12}{\\*\\objdata ${ole1Link("Word.Document.12", target)}}{\\result {\\pict\\pngblip\\picw4\\pich4\\picwgoal600\\pichgoal600 ${OWN_PNG.toString("hex")}}}}\\par`,
          ),
        ].join("\n"),
      ),
    ownImage: true,
  },
];

/**
 * The DOC LibreOffice writes from `source`, checked to still hold each field
 * instruction of `instructions` (as Word 97 keeps text, UTF-16): a link lost
 * on the way would leave the case testing nothing.
 */
async function docLinkingTo(source: Buffer, instructions: string[]): Promise<Buffer> {
  const doc = await docFromDocx(source);
  const text = doc.toString("utf16le");
  const lost = instructions.filter((instruction) => !text.includes(instruction));
  if (lost.length > 0) throw new Error(`the DOC made for the test lost its links: ${lost.join("; ")}`);
  return doc;
}

/** An OLE 1.0 linked object (MS-OLEDS 2.2.6 LinkedObject): class, topic (the linked file), empty item, network name, update always. */
function ole1Link(className: string, topic: string): string {
  const ansi = (text: string) => {
    const bytes = Buffer.from(`${text}\0`, "latin1");
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const u32 = (value: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32LE(value);
    return bytes;
  };
  return Buffer.concat([u32(0x00000501), u32(0x00000001), ansi(className), ansi(topic), ansi(""), ansi(topic), u32(0), u32(1)]).toString("hex");
}

/** Sizes (w×h) of the images in a PDF, as `pdfimages -list` reports them. */
async function pdfImageSizes(path: string): Promise<string[]> {
  const result = await tool("pdfimages", ["-list", path]);
  if (result.code !== 0) throw new Error(`pdfimages -list ${path}: ${result.stderr}`);
  return result.stdout
    .split("\n")
    .slice(2)
    .map((line) => line.trim().split(/\s+/))
    .filter((columns) => columns.length > 4 && columns[2] === "image")
    .map((columns) => `${columns[3]}x${columns[4]}`);
}

/** True when `bytes`, or a part of it (a ZIP's entries, an OLE compound file's streams, nested), holds the marker text. */
function holdsMarker(bytes: Uint8Array): boolean {
  const data = Buffer.from(bytes);
  if (data.toString("latin1").includes(LEAK) || data.toString("utf16le").includes(LEAK)) return true;
  try {
    if (data.subarray(0, 2).toString("latin1") === "PK") return Object.values(unzipSync(data)).some(holdsMarker);
    if (data.readUInt32BE(0) === 0xd0cf11e0) return CFB.read(data, { type: "buffer" }).FileIndex.some((entry) => entry.content && holdsMarker(entry.content as Uint8Array));
  } catch {
    // not a readable container: the raw bytes were searched
  }
  return false;
}

/** Sizes (w×h) of the PNG media of a DOCX; "marker" for any other part of media or embeddings that holds the marker text. */
function docxImageSizes(bytes: Buffer): string[] {
  return Object.entries(unzipSync(bytes))
    .filter(([name]) => /^word\/(media|embeddings)\//.test(name))
    .map(([, data]) => {
      const png = Buffer.from(data);
      if (png.subarray(1, 4).toString("latin1") === "PNG") return `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
      return holdsMarker(data) ? "marker" : "object";
    });
}

/** What of the outside world a conversion's output holds: the marker text, the server's 8×8 or the local 6×6 image. */
function leaks(text: string, imageSizes: string[], what: string): string[] {
  const found: string[] = [];
  if (text.includes(LEAK)) found.push(`${what}: text of an external resource (${text.split("\n").filter((line) => line.includes(LEAK)).join(" | ").slice(0, 200)})`);
  if (imageSizes.includes("8x8")) found.push(`${what}: the server's image`);
  if (imageSizes.includes("6x6")) found.push(`${what}: the local file's image`);
  if (imageSizes.includes("marker")) found.push(`${what}: an embedded object holding an external resource`);
  return found;
}

/**
 * Cases also converted by the cold fallback directly: DOC and DOCX reach
 * LibreOffice as sent (ODT and RTF are rewritten first, which the fallback
 * never sees on its own), and these hold every kind of their links.
 */
const COLD_CASES = ["doc-includepicture", "doc-includetext-link-fields", "docx-drawing-blip-link", "docx-includetext-link-dde-fields"];

interface Backend {
  title: string;
  start(): Promise<{ platform: Platform; stop(): Promise<void> }>;
  /** Whether it converts to DOCX too (Gotenberg writes PDF only). */
  toDocx: boolean;
  /** Whether its LibreOffice pool falls back to a cold `soffice --convert-to` (convertCold), tried here directly. */
  coldFallback: boolean;
}

const BACKENDS: Backend[] = [
  {
    title: "the local LibreOffice pool",
    async start() {
      const platform = await startPlatform({ CONVERSION_POOL_SIZE: "1" });
      return { platform, stop: () => platform.stop() };
    },
    toDocx: true,
    coldFallback: true,
  },
  {
    title: "Gotenberg",
    async start() {
      const gotenberg = await startGotenberg();
      const platform = await startPlatform({ CONVERSION_BACKEND: "gotenberg", GOTENBERG_URL: gotenberg.url }).catch(async (error: unknown) => {
        await gotenberg.stop();
        throw error;
      });
      return { platform, stop: async () => void (await Promise.all([platform.stop(), gotenberg.stop()])) };
    },
    toDocx: false,
    coldFallback: false,
  },
];

for (const backend of BACKENDS) {
  describe(`POST /v1/convert from docx, doc, odt and rtf through ${backend.title}: nothing outside the document is read`, () => {
    let platform: Platform;
    let stopBackend: (() => Promise<void>) | undefined;
    let server: Server;
    let web: string;
    let files: string;
    const requests: string[] = [];
    const file = (name: string) => pathToFileURL(join(files, name)).href;

    before(async () => {
      files = mkdtempSync(join(tmpdir(), "docservice-linked-"));
      server = createServer((request, response) => {
        requests.push(`${request.method} ${request.url}`);
        const path = new URL(request.url ?? "/", "http://x").pathname;
        const extension = /\.(\w+)$/.exec(path)?.[1] ?? "";
        if (extension === "png") return void response.writeHead(200, { "Content-Type": "image/png" }).end(REMOTE_PNG);
        if (extension === "txt") return void response.writeHead(200, { "Content-Type": "text/plain" }).end(`${LEAK} remote text from ${path}\n`);
        if (extension === "css") return void response.writeHead(200, { "Content-Type": "text/css" }).end(`p { background-image: url(${web}/from-css.png) }`);
        if (["docx", "dotx"].includes(extension)) return void response.writeHead(200, { "Content-Type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document" }).end(docx({ body: para(`${LEAK} remote document ${path}`) }));
        if (["odt", "ott"].includes(extension)) return void response.writeHead(200, { "Content-Type": "application/vnd.oasis.opendocument.text" }).end(odt({ body: `<text:p>${LEAK} remote document ${path}</text:p>` }));
        response.writeHead(200, { "Content-Type": "text/html" }).end(`<html><body><p>${LEAK} remote page ${path}</p><img src="${web}/nested.png"></body></html>`);
      });
      const port = await freePort();
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
      web = `http://127.0.0.1:${port}`;
      writeFileSync(join(files, "secret.png"), LOCAL_PNG);
      writeFileSync(join(files, "secret.txt"), `${LEAK} from a local text file\n`);
      writeFileSync(join(files, "secret.html"), `<html><body><p>${LEAK} from a local HTML file</p></body></html>\n`);
      writeFileSync(join(files, "secret.docx"), docx({ body: para(`${LEAK} from a local DOCX file`) }));
      writeFileSync(join(files, "secret.odt"), odt({ body: `<text:p>${LEAK} from a local ODT file</text:p>` }));
      ({ platform, stop: stopBackend } = await backend.start());
    });

    /** Once LibreOffice had a moment for what it loads lazily (linked graphics, after answering): no request, and nothing `found` in the output. */
    async function assertNothingRead(testCase: Case, found: string[]): Promise<void> {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      found.push(...requests.map((request) => `request: ${request}`));
      assert.deepEqual(found, [], `${testCase.name} read outside the document:\n${found.join("\n")}`);
    }

    after(async () => {
      await stopBackend?.();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
      rmSync(files, { recursive: true, force: true });
    });

    for (const testCase of CASES) {
      test(`${testCase.name}: no request, no local file in the output, the text stays`, async () => {
        const source = await testCase.build(web, file);
        requests.length = 0;
        const found: string[] = [];

        const pdf = await convertFile(platform, source, `${testCase.name}.${testCase.from}`, testCase.from);
        assert.equal(pdf.status, 200, pdf.status === 200 ? "" : await pdf.text());
        const pdfBytes = Buffer.from(await pdf.arrayBuffer());
        const pdfPath = join(files, `${testCase.name}.pdf`);
        writeFileSync(pdfPath, pdfBytes);
        const text = await pdfText(pdfPath);
        const images = await pdfImageSizes(pdfPath);
        found.push(...leaks(text, images, "PDF"));

        let docxText = "";
        if (backend.toDocx && testCase.from !== "docx") {
          const converted = await convertFile(platform, source, `${testCase.name}.${testCase.from}`, testCase.from, { to: "docx" });
          assert.equal(converted.status, 200, converted.status === 200 ? "" : await converted.text());
          const docxBytes = Buffer.from(await converted.arrayBuffer());
          docxText = docxFileText(docxBytes);
          found.push(...leaks(docxText, docxImageSizes(docxBytes).filter((size) => size !== "4x4"), "DOCX"));
        }

        await assertNothingRead(testCase, found);
        assert.match(text, visibleText(testCase));
        if (docxText) assert.match(docxText, visibleText(testCase));
        if (!testCase.ownImage) assert.deepEqual(images, [], "the PDF holds an image, and the document has none of its own");
      });
    }

    for (const testCase of backend.coldFallback ? CASES.filter((c) => COLD_CASES.includes(c.name)) : []) {
      test(`${testCase.name}, through the cold fallback (soffice --convert-to on the pool's profile): no request, no local file in the output, the text stays`, async () => {
        const source = await testCase.build(web, file);
        const directory = mkdtempSync(join(files, "cold-"));
        const input = join(directory, `${testCase.name}.${testCase.from}`);
        writeFileSync(input, source);
        requests.length = 0;

        const pdfPath = await convertCold(input, formatByName(testCase.from)!.importFilter, libreOfficeExport(PDF), join(directory, "profile"), 60_000);
        const text = await pdfText(pdfPath);
        const images = await pdfImageSizes(pdfPath);
        await assertNothingRead(testCase, leaks(text, images, "PDF"));
        assert.match(text, visibleText(testCase));
        if (!testCase.ownImage) assert.deepEqual(images, [], "the PDF holds an image, and the document has none of its own");
      });
    }
  });
}
