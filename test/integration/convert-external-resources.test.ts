// /v1/convert from=html and from=md must not make LibreOffice read anything
// outside the document (server-side request forgery): every kind of external
// reference HTML has, pointed at a local HTTP server that records each request
// and at files of this machine, converted by the real LibreOffice pool in
// embedded mode. Nothing may be requested, and nothing of those files may end
// up in the output; the document's own text, table and data: image stay.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { unzipSync } from "fflate";
import { PDFDocument } from "pdf-lib";
import { after, before, describe, test } from "node:test";
import { docxFileText } from "../support/docx-text.js";
import { pdfText } from "../support/pdf-tools.js";
import { convertFile, startPlatform, type Platform } from "../support/platform.js";
import { freePort } from "../support/ports.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
const LEAK = "LEAKEDMARKER";

/** An HTML page with every way HTML has of pointing elsewhere: `web` is the recording server, `files` a folder of this machine. */
function hostileHtml(web: string, files: string): string {
  const file = (name: string) => pathToFileURL(join(files, name)).href;
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<base href="${web}/base/">
<link rel="stylesheet" href="${web}/link-stylesheet.css">
<link rel="stylesheet" href="${file("chained.css")}">
<link rel="icon" href="${web}/link-icon.png">
<meta http-equiv="refresh" content="0; url=${web}/meta-refresh.html">
<script src="${web}/script.js"></script>
<style>@import url("${web}/style-import.css"); h1 { background-image: url(${web}/style-url.png); }</style>
</head>
<body background="${web}/body-background.png">
<h1>Hostile heading</h1>
<p>Visible paragraph text.</p>
<img src="${web}/img.png" alt="remote image">
<img src="relative-to-base.png">
<img src="${file("secret.png")}">
<img srcset="${web}/img-srcset.png 1x" src="${web}/img-with-srcset.png">
<p style="background-image: url('${web}/inline-style.png')">Styled paragraph.</p>
<table background="${web}/table-background.png"><tr><td background="${web}/td-background.png">cell one</td><td>cell two</td></tr></table>
<iframe src="${web}/iframe.html"></iframe>
<iframe src="${file("secret.txt")}"></iframe>
<object data="${web}/object.html" type="text/html"></object>
<object data="${file("secret.txt")}" type="text/plain"></object>
<embed src="${web}/embed.html" type="text/html">
<applet code="Leak.class" codebase="${web}/applet/"></applet>
<bgsound src="${web}/bgsound.wav">
<input type="image" src="${web}/input-image.png">
<video poster="${web}/video-poster.png" src="${web}/video.mp4"></video>
<audio src="${web}/audio.mp3"></audio>
<svg><image href="${web}/svg-image.png" width="10" height="10"></image></svg>
<frameset><frame src="${web}/frame.html"></frameset>
</body></html>
`;
}

/** The same as Markdown: its own image syntax, and raw HTML, which Markdown passes through. */
function hostileMarkdown(web: string, files: string): string {
  return `# Markdown heading

Some *emphasis* and a [link](${web}/never-fetched-link.html).

![remote](${web}/md-image.png)

![local](${pathToFileURL(join(files, "secret.png")).href})

| Name | Amount |
|---|---|
| apples | 12 |

${hostileHtml(web, files).replace(/^<!DOCTYPE html>\n<html><head>/, "").replace(/<\/?(html|head|body)[^>]*>/g, "")}
`;
}

describe("POST /v1/convert from html and md: no external resource is read", () => {
  let platform: Platform;
  let server: Server;
  let web: string;
  let files: string;
  const requests: string[] = [];

  before(async () => {
    files = mkdtempSync(join(tmpdir(), "docservice-ssrf-"));
    server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      const path = request.url ?? "/";
      if (path.endsWith(".png")) response.writeHead(200, { "Content-Type": "image/png" }).end(PNG);
      else if (path.endsWith(".css")) response.writeHead(200, { "Content-Type": "text/css" }).end(`body { background-image: url(${web}/from-css.png) }`);
      else response.writeHead(200, { "Content-Type": "text/html" }).end(`<html><body><p>${LEAK} from ${path}</p><img src="${web}/nested.png"></body></html>`);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    web = `http://127.0.0.1:${port}`;
    writeFileSync(join(files, "secret.txt"), `${LEAK} from a local file\n`);
    writeFileSync(join(files, "secret.png"), PNG);
    writeFileSync(join(files, "chained.css"), `body { background-image: url(${web}/chained-from-local-css.png) }\n`);
    platform = await startPlatform({ CONVERSION_POOL_SIZE: "1" });
  });

  after(async () => {
    await platform?.stop();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    rmSync(files, { recursive: true, force: true });
  });

  for (const from of ["html", "md"] as const) {
    test(`from=${from}, to PDF and to DOCX: the server sees no request, no local file is read, the text stays`, async () => {
      const source = Buffer.from(from === "html" ? hostileHtml(web, files) : hostileMarkdown(web, files));
      requests.length = 0;

      const pdf = await convertFile(platform, source, `hostile.${from}`, from);
      assert.equal(pdf.status, 200, pdf.status === 200 ? "" : await pdf.text());
      const pdfBytes = Buffer.from(await pdf.arrayBuffer());
      const pdfPath = join(files, `hostile-${from}.pdf`);
      writeFileSync(pdfPath, pdfBytes);
      const text = await pdfText(pdfPath);

      const docx = await convertFile(platform, source, `hostile.${from}`, from, { to: "docx" });
      assert.equal(docx.status, 200, docx.status === 200 ? "" : await docx.text());
      const docxBytes = Buffer.from(await docx.arrayBuffer());
      const docxText = docxFileText(docxBytes);

      // LibreOffice may fetch after answering (linked graphics are loaded lazily): give it a moment
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.deepEqual(requests, [], `LibreOffice fetched from the test server:\n${requests.join("\n")}`);
      assert.doesNotMatch(text, new RegExp(LEAK), "the PDF holds text of an external resource");
      assert.doesNotMatch(docxText, new RegExp(LEAK), "the DOCX holds text of an external resource");
      // the document has no image of its own: any image is a local file read or an embedded frame
      assert.doesNotMatch(pdfBytes.toString("latin1"), /\/Subtype\s*\/Image/, "the PDF holds an image");
      assert.deepEqual(Object.keys(unzipSync(docxBytes)).filter((name) => /^word\/(media|embeddings)\//.test(name)), [], "the DOCX holds an image or an embedded object");
      const heading = from === "html" ? /Hostile heading[\s\S]*Visible paragraph text[\s\S]*cell one[\s\S]*cell two/ : /Markdown heading[\s\S]*emphasis[\s\S]*apples[\s\S]*12/;
      assert.match(text, heading);
      assert.match(docxText, heading);
    });
  }

  test("kept: the title, headings, tables, lists, inline formatting and data: images", async () => {
    const html = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Kept</title></head><body>
<h2>Second-level heading</h2><p><strong>bold</strong> <em>italic</em> <u>underlined</u> <a href="https://example.com/">a link</a></p>
<ul><li>first item</li><li>second item</li></ul>
<table><tr><th>head</th></tr><tr><td>body cell</td></tr></table>
<img src="data:image/png;base64,${PNG.toString("base64")}" width="40" height="40" alt="inline">
</body></html>`;
    requests.length = 0;
    const response = await convertFile(platform, Buffer.from(html), "kept.html", "html");
    assert.equal(response.status, 200);
    const pdf = Buffer.from(await response.arrayBuffer());
    assert.match(pdf.toString("latin1"), /\/Subtype\s*\/Image/, "the data: image is missing from the PDF");
    assert.equal((await PDFDocument.load(pdf, { updateMetadata: false })).getTitle(), "Kept");
    const pdfPath = join(files, "kept.pdf");
    writeFileSync(pdfPath, pdf);
    assert.match(await pdfText(pdfPath), /Second-level heading[\s\S]*bold[\s\S]*italic[\s\S]*a link[\s\S]*first item[\s\S]*second item[\s\S]*head[\s\S]*body cell/);
    assert.deepEqual(requests, []);
  });
});
