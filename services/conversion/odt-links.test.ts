import assert from "node:assert/strict";
import { test } from "node:test";
import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";
import { ServiceError } from "../core/errors.js";
import { isPackageReference, stripOdtLinks } from "./odt-links.js";

const NS = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:l="http://www.w3.org/1999/xlink"';

const odt = (body: string) =>
  Buffer.from(
    zipSync({
      mimetype: [strToU8("application/vnd.oasis.opendocument.text"), { level: 0 }],
      "META-INF/manifest.xml": strToU8("<manifest/>"),
      "content.xml": strToU8(`<?xml version="1.0" encoding="UTF-8"?><office:document-content ${NS}><office:body><office:text>${body}</office:text></office:body></office:document-content>`),
    }),
  );

test("isPackageReference: what LibreOffice reads from the package, and what lies outside it", () => {
  for (const inside of ["Pictures/1.png", "./Object 1", "Object 1", "#bookmark", "a/b:c"]) assert.equal(isPackageReference(inside), true, inside);
  for (const outside of ["http://10.0.0.1/a.png", "file:///etc/passwd", "/etc/passwd", "../secret.png", "..\\x", "\\\\server\\share", " smb://host/x", "vnd.sun.star.script:x"]) {
    assert.equal(isPackageReference(outside), false, outside);
  }
});

test("external references are removed, whatever the namespace prefix and however the URL is written; hyperlinks and package references stay", () => {
  const source = odt(
    '<text:p><draw:frame><draw:image l:href="&#104;ttp://10.0.0.1/a.png"/></draw:frame><draw:frame><draw:image l:href="Pictures/own.png"/></draw:frame>' +
      '<text:a l:href="https://example.com/">link</text:a></text:p><text:section text:name="s"><text:section-source l:href="file:///etc/passwd"/></text:section>',
  );
  const parts = unzipSync(stripOdtLinks(source));
  assert.equal(Object.keys(parts)[0], "mimetype");
  const content = strFromU8(parts["content.xml"]);
  assert.doesNotMatch(content, /10\.0\.0\.1|etc\/passwd/);
  assert.match(content, /l:href="Pictures\/own.png"/);
  assert.match(content, /<text:a l:href="https:\/\/example.com\/">link<\/text:a>/);
});

test("a document with nothing outside it is returned as it came", () => {
  const source = odt('<text:p><text:a l:href="https://example.com/">link</text:a><draw:frame><draw:image l:href="Pictures/own.png"/></draw:frame></text:p>');
  assert.equal(stripOdtLinks(source), source);
});

test("a part far larger than a document's is refused before it is parsed; one that points nowhere outside is not parsed at all", () => {
  const link = '<draw:frame><draw:image l:href="http://example.com/a.png"/></draw:frame>';
  const started = performance.now();
  assert.throws(
    () => stripOdtLinks(odt(link + "<text:p/>".repeat(2_000_000))),
    (error: ServiceError) => error.code === "UNPROCESSABLE_DOCUMENT" && /more than 500000 XML elements \(content\.xml\)/.test(error.message),
  );
  const unlinked = odt("<text:p/>".repeat(2_000_000));
  assert.equal(stripOdtLinks(unlinked), unlinked);
  assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
});
