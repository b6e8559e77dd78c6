import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeHtml, safeDeclarations, safeStylesheet, sanitizeHtmlDocument } from "./html-sanitizer.js";
import { markdownToHtml } from "./markdown-source.js";

const PNG_DATA = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const clean = (html: string) => sanitizeHtmlDocument(Buffer.from(html)).toString("utf8");
/** Every URL-ish reference to the outside left in the output. */
const external = (html: string) => html.match(/(?:https?:|file:|ftp:|\/\/evil|evil\.|secret|passwd|url\s*\(|@import)/gi) ?? [];

describe("HTML sanitizer", () => {
  test("removes every construct that makes LibreOffice (or a browser) fetch something", () => {
    const hostile = `<!DOCTYPE html><html><head>
      <base href="http://evil.test/">
      <link rel="stylesheet" href="http://evil.test/a.css"><link rel="icon" href="file:///etc/passwd">
      <meta http-equiv="refresh" content="0; url=http://evil.test/r">
      <script src="http://evil.test/s.js">fetch("http://evil.test/x")</script>
      <style>@import url("http://evil.test/i.css"); @font-face { font-family: X; src: url(http://evil.test/f.ttf) }
        h1 { color: red; background: url(http://evil.test/b.png) } p { background-image: u\\72l(http://evil.test/c.png) }
        div { background: image-set("http://evil.test/d.png" 1x) }</style>
      </head><body background="http://evil.test/body.png" onload="alert(1)">
      <h1>Title</h1>
      <img src="http://evil.test/i.png"><img src="file:///etc/passwd"><img src="secret.png"><img src="//evil.test/p.png">
      <img srcset="http://evil.test/s.png 1x"><img src="data:image/svg+xml,<svg><image href='http://evil.test/svg.png'/></svg>">
      <img src="${PNG_DATA}" lowsrc="http://evil.test/low.png" dynsrc="http://evil.test/dyn.avi" onerror="x()">
      <p style="background: url('http://evil.test/inline.png'); color: blue">para</p>
      <table background="http://evil.test/t.png"><tr><td background="http://evil.test/td.png">cell</td></tr></table>
      <iframe src="http://evil.test/if.html">iframe fallback</iframe><iframe srcdoc="<img src=http://evil.test/srcdoc.png>"></iframe>
      <object data="file:///etc/passwd" type="text/plain"><param name="movie" value="http://evil.test/m.swf">object fallback</object>
      <embed src="http://evil.test/e.swf"><applet code="A.class" codebase="http://evil.test/"></applet>
      <bgsound src="http://evil.test/s.wav"><input type="image" src="http://evil.test/in.png">
      <video poster="http://evil.test/v.png" src="http://evil.test/v.mp4"></video><audio src="http://evil.test/a.mp3"></audio>
      <svg><image href="http://evil.test/svg2.png"/><use xlink:href="http://evil.test/u.svg#x"/></svg>
      <frameset><frame src="http://evil.test/f.html"></frameset><form action="http://evil.test/f"><button formaction="http://evil.test/b">b</button></form>
      <a href="file:///etc/passwd">local link</a><a href="secret.html">relative link</a><a href="javascript:alert(1)">js link</a>
      </body></html>`;
    const out = clean(hostile);
    assert.deepEqual(external(out), [], out);
    assert.doesNotMatch(out, /<(?:script|link|base|meta http|iframe|object|embed|applet|bgsound|input|video|audio|svg|frame|form|param)\b/i);
    assert.doesNotMatch(out, /\s(?:on\w+|srcset|lowsrc|dynsrc|background|poster|srcdoc|formaction)=/i);
    // what is kept: the text, the inline data: image, the harmless CSS
    assert.match(out, /<h1>Title<\/h1>/);
    assert.equal(out.match(/<img /g)?.length, 1);
    assert.ok(out.includes(`<img src="${PNG_DATA}" />`), out);
    assert.match(out, /<p style="color: blue">para<\/p>/);
    assert.match(out, /<td>cell<\/td>/);
    assert.match(out, /object fallback/);
    assert.doesNotMatch(out, /iframe fallback/);
    assert.match(out, /<a>local link<\/a>/);
    assert.match(out, /<style>h1 \{[^}]*color: red[^}]*\}[^<]*<\/style>/);
  });

  test("keeps text, headings, tables, lists, inline formatting, links, the title and data: images", () => {
    const html = `<html><head><title>Quarterly &amp; report</title></head><body>
      <h2 id="top">Heading</h2><p><b>bold</b> <strong>strong</strong> <i>it</i> <em>em</em> <u>u</u> <s>s</s> <sub>2</sub><sup>3</sup> <code>c</code> <font face="Arial" color="#ff0000">f</font></p>
      <ul><li>one</li><li>two</li></ul><ol start="3"><li>three</li></ol>
      <table border="1"><caption>cap</caption><thead><tr><th colspan="2">h</th></tr></thead><tbody><tr><td rowspan="2" bgcolor="#eee">a</td><td>b</td></tr></tbody></table>
      <p><a href="https://example.com/x?a=1&amp;b=2">web</a> <a href="mailto:a@example.com">mail</a> <a href="#top">anchor</a></p>
      <img src="${PNG_DATA}" alt="pixel" width="40" height="40"><pre>  pre  </pre><blockquote>quote</blockquote></body></html>`;
    const out = clean(html);
    assert.match(out, /^<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Quarterly &amp; report<\/title><\/head><body>/);
    for (const kept of [
      '<h2 id="top">Heading</h2>', "<b>bold</b>", "<strong>strong</strong>", "<i>it</i>", "<em>em</em>", "<u>u</u>", "<s>s</s>", "<sub>2</sub>", "<sup>3</sup>",
      "<code>c</code>", '<font face="Arial" color="#ff0000">f</font>', "<ul><li>one</li><li>two</li></ul>", '<ol start="3"><li>three</li></ol>',
      '<table border="1"><caption>cap</caption>', '<th colspan="2">h</th>', '<td rowspan="2" bgcolor="#eee">a</td>',
      '<a href="https://example.com/x?a=1&amp;b=2">web</a>', '<a href="mailto:a@example.com">mail</a>', '<a href="#top">anchor</a>',
      `<img src="${PNG_DATA}" alt="pixel" width="40" height="40" />`, "<pre>  pre  </pre>", "<blockquote>quote</blockquote>",
    ]) assert.ok(out.includes(kept), `missing ${kept} in\n${out}`);
  });

  test("Markdown: its images and raw HTML are sanitized, its structure kept", () => {
    const md = `# Heading\n\n![remote](http://127.0.0.1:1/x.png) ![local](file:///etc/passwd) ![inline](${PNG_DATA})\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<iframe src="http://127.0.0.1:1/"></iframe><link rel="stylesheet" href="http://127.0.0.1:1/s.css">\n\n- *item*\n`;
    const out = sanitizeHtmlDocument(markdownToHtml(Buffer.from(md))).toString("utf8");
    assert.doesNotMatch(out, /127\.0\.0\.1|file:|<iframe|<link/);
    assert.match(out, /<h1>Heading<\/h1>/);
    assert.match(out, /<table>[\s\S]*<td>1<\/td>[\s\S]*<\/table>/);
    assert.match(out, /<li><em>item<\/em><\/li>/);
    assert.equal(out.match(/<img /g)?.length, 1);
  });

  test("CSS: url(), @import, @font-face, escapes and comments go; the rest stays", () => {
    assert.equal(safeStylesheet("@import 'http://evil.test/a.css'; p { color: red; }"), "p { color: red }");
    assert.equal(safeStylesheet("@media print { p { background: url(x.png); margin: 0 } }"), "@media print { p { margin: 0 } }");
    assert.equal(safeStylesheet("p { list-style: square u\\rl(x) } td { border: 1px solid #000 }"), "p {} td { border: 1px solid #000 }");
    assert.equal(safeStylesheet("p { color: red /* </style><img src=http://evil.test/> */ }"), "p { color: red }");
    assert.equal(safeStylesheet("p { color: \"</style><img src=http://evil.test/x>\" }"), "p {}");
    assert.equal(safeStylesheet("p { color: red"), ""); // unclosed: postcss refuses it
    assert.equal(safeStylesheet("}}} {{{"), "");
    assert.equal(safeDeclarations("color: red; background-image: url(http://evil.test/); font-weight: bold"), "color: red; font-weight: bold");
    assert.equal(safeDeclarations("behavior: url(x.htc); -moz-binding: url(x.xml#b)"), "");
    assert.equal(safeDeclarations("p { color: red }"), "");
  });

  test("the page is decoded by its BOM or meta charset, else as UTF-8 or Windows-1252, and written as UTF-8", () => {
    assert.equal(decodeHtml(Buffer.from("<p>café</p>")), "<p>café</p>");
    assert.equal(decodeHtml(Buffer.from("<p>caf\xe9</p>", "latin1")), "<p>café</p>");
    assert.equal(decodeHtml(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<p>é</p>", "utf16le")])), "<p>é</p>");
    assert.equal(decodeHtml(Buffer.from('<meta charset="iso-8859-7"><p>\xe1</p>', "latin1")), '<meta charset="iso-8859-7"><p>α</p>');
    assert.equal(decodeHtml(Buffer.from('<meta charset="no-such-charset"><p>é</p>')), '<meta charset="no-such-charset"><p>é</p>');
    assert.equal(decodeHtml(Buffer.from('<meta charset="utf-16"><p>é</p>')), '<meta charset="utf-16"><p>é</p>');
    const out = sanitizeHtmlDocument(Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"></head><body><p>\x80 caf\xe9</p></body></html>', "latin1"));
    assert.match(out.toString("utf8"), /<meta charset="utf-8">[\s\S]*<p>€ café<\/p>/);
  });
});
