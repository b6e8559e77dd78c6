import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { DOMParser, type Node } from "@xmldom/xmldom";
import { strFromU8, unzipSync } from "fflate";
import { ServiceError } from "./errors.js";
import { checkXmlShape, XML_LIMITS, xmlShape } from "./xml-shape.js";

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const nested = (levels: number) => `<w:document ${W}>${"<w:p>".repeat(levels - 1)}${"</w:p>".repeat(levels - 1)}</w:document>`;
const flat = (elements: number) => `<w:document ${W}>${"<w:p/>".repeat(elements - 1)}</w:document>`;

/** The element count and depth a DOM parser finds, to hold the scan to. */
function parsedShape(xml: string): { elements: number; depth: number } {
  const document = new DOMParser({ onError: () => {} }).parseFromString(xml, "text/xml");
  let elements = 0;
  let deepest = 0;
  const stack: Array<[Node, number]> = [[document.documentElement!, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    elements++;
    deepest = Math.max(deepest, depth);
    for (let child = node.firstChild; child; child = child.nextSibling) if (child.nodeType === 1) stack.push([child, depth + 1]);
  }
  return { elements, depth: deepest };
}

describe("xmlShape", () => {
  test("counts elements and depth as a DOM parser finds them, past comments, CDATA, processing instructions, a DOCTYPE and quoted '>'", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE w:document [<!ENTITY e "<w:fake/>">]>
<w:document ${W}><!-- <w:p><w:p> --><w:body a="x > y" b='/>'><w:p><w:r><w:t><![CDATA[<w:p><w:p>]]></w:t></w:r></w:p><w:p/><?pi <w:p>?></w:body></w:document>`;
    assert.deepEqual(xmlShape(xml), parsedShape(xml));
    assert.deepEqual(xmlShape(xml), { elements: 6, depth: 5 });
  });

  test("every XML part of the shared corpus: the same counts as the parser, and well within the limits", () => {
    const corpus = new URL("../../../shared/corpus/docx/", import.meta.url);
    let largest = 0;
    for (const file of readdirSync(corpus).filter((name) => name.endsWith(".docx"))) {
      const parts = unzipSync(new Uint8Array(readFileSync(new URL(file, corpus))));
      for (const [name, bytes] of Object.entries(parts).filter(([name]) => name.endsWith(".xml"))) {
        const xml = strFromU8(bytes);
        assert.deepEqual(xmlShape(xml), parsedShape(xml), `${file}: ${name}`);
        largest = Math.max(largest, xmlShape(xml).elements);
      }
    }
    assert.ok(largest > 10_000 && largest * 5 < XML_LIMITS.maxElements, `largest part: ${largest} elements`);
  });

  test("stops counting just past a limit: 5 million elements cost the scan no more than the limit's worth", () => {
    const huge = flat(5_000_000);
    const started = performance.now();
    assert.equal(xmlShape(huge).elements, XML_LIMITS.maxElements + 1);
    assert.ok(performance.now() - started < 1000);
    assert.equal(xmlShape(nested(1_000_000)).depth, XML_LIMITS.maxDepth + 1);
  });
});

describe("checkXmlShape", () => {
  test("the limits exactly: elements of all parts together, the depth of each", () => {
    assert.equal(checkXmlShape(flat(XML_LIMITS.maxElements), "word/document.xml"), XML_LIMITS.maxElements);
    assert.equal(checkXmlShape(nested(XML_LIMITS.maxDepth), "word/document.xml"), XML_LIMITS.maxDepth);
    assert.throws(
      () => checkXmlShape(flat(XML_LIMITS.maxElements + 1), "word/document.xml"),
      (error: ServiceError) => error.code === "UNPROCESSABLE_DOCUMENT" && error.message === `The document has more than ${XML_LIMITS.maxElements} XML elements (word/document.xml); at most ${XML_LIMITS.maxElements} are accepted.`,
    );
    assert.throws(() => checkXmlShape(nested(XML_LIMITS.maxDepth + 1), "word/header1.xml"), /word\/header1\.xml nests XML elements more than 256 levels deep/);
    const counted = checkXmlShape(flat(60_000), "word/document.xml");
    assert.throws(() => checkXmlShape(flat(50_000), "word/header2.xml", counted), /\(word\/header2\.xml and the parts read before it\)/);
    assert.equal(checkXmlShape(flat(150_000), "content.xml", 0, { maxElements: 500_000, maxDepth: 256 }), 150_000);
  });
});
