import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { ServiceError } from "../core/errors.js";
import { markdownToHtml } from "./markdown-source.js";
import {
  checkHtmlNesting,
  checkMarkdownNesting,
  htmlNestingDepth,
  markdownNestingDepth,
  MAX_HTML_NESTING,
  MAX_MARKDOWN_NESTING,
} from "./nesting-limits.js";

/** A list item per line, each indented one level below the one before. */
const indentedList = (levels: number) => Array.from({ length: levels }, (_, level) => `${"  ".repeat(level)}- item ${level}`).join("\n");

const refusedNaming = (limit: number) => (error: unknown) => {
  assert.ok(error instanceof ServiceError, String(error));
  assert.equal(error.code, "UNPROCESSABLE_DOCUMENT");
  assert.match(error.message, new RegExp(`more than ${limit} levels deep`));
  return true;
};

/** Milliseconds `check` takes, which must be few: the scan runs before marked or sanitize-html, whatever the input. */
function timed(check: () => void): number {
  const started = performance.now();
  try {
    check();
  } catch {
    // the outcome is asserted separately
  }
  return performance.now() - started;
}

describe("markdownNestingDepth", () => {
  test("block quotes and list items, on one line or by indentation, one level each", () => {
    assert.equal(markdownNestingDepth("plain text\n\n# heading\n"), 0);
    assert.equal(markdownNestingDepth("> quoted\n> > twice\n"), 2);
    assert.equal(markdownNestingDepth("- a\n  - b\n    1. c\n       * d\n"), 4);
    assert.equal(markdownNestingDepth("- a\n- b\n- c\n"), 1, "siblings do not nest");
    assert.equal(markdownNestingDepth("- a\n\n  - b\n\nback at the margin\n- c\n"), 2, "a blank line keeps the item open; text at the margin closes it");
    assert.equal(markdownNestingDepth("> - a\n>   - b\n1) > - c\r\n"), 3);
    assert.equal(markdownNestingDepth("*emphasis*, -1, 2026 was a year\n---\n"), 0, "no marker without a blank after it");
    assert.equal(markdownNestingDepth(indentedList(MAX_MARKDOWN_NESTING)), MAX_MARKDOWN_NESTING);
  });

  test("the README, a real document, nests shallowly", () => {
    assert.ok(markdownNestingDepth(readFileSync(new URL("../../README.md", import.meta.url), "utf8")) <= 3);
  });

  test("one level past the limit is refused, naming it; the limit itself is not", () => {
    checkMarkdownNesting(indentedList(MAX_MARKDOWN_NESTING));
    checkMarkdownNesting(`${"> ".repeat(MAX_MARKDOWN_NESTING)}x\n`);
    assert.throws(() => checkMarkdownNesting(indentedList(MAX_MARKDOWN_NESTING + 1)), refusedNaming(MAX_MARKDOWN_NESTING));
    assert.throws(() => checkMarkdownNesting(`${"> ".repeat(MAX_MARKDOWN_NESTING + 1)}x\n`), refusedNaming(MAX_MARKDOWN_NESTING));
  });

  test("what overflowed marked's stack is refused at once", () => {
    for (const marker of ["> ", "- ", "1. "]) {
      const markdown = `${marker.repeat(50_000)}x\n`;
      assert.throws(() => checkMarkdownNesting(markdown), refusedNaming(MAX_MARKDOWN_NESTING));
      assert.ok(timed(() => checkMarkdownNesting(markdown)) < 50, marker);
    }
    assert.throws(() => markdownToHtml(Buffer.from(`${"> ".repeat(50_000)}x\n`)), refusedNaming(MAX_MARKDOWN_NESTING));
  });
});

describe("htmlNestingDepth", () => {
  test("elements nest as htmlparser2 nests them", () => {
    assert.equal(htmlNestingDepth("<html><body><div><p>text</p></div></body></html>"), 4);
    assert.equal(htmlNestingDepth(`<body>${"<p>paragraph".repeat(1000)}</body>`), 2, "a <p> ends the one before");
    assert.equal(htmlNestingDepth(`<ul>${"<li>item".repeat(1000)}</ul>`), 2, "so does an <li>");
    assert.equal(htmlNestingDepth(`<table>${"<tr><td>a<td>b".repeat(1000)}</table>`), 3, "and table rows and cells");
    assert.equal(htmlNestingDepth(`<p>${"<br><img src=x><hr>".repeat(1000)}`), 1, "void elements hold nothing");
    assert.equal(htmlNestingDepth(`<div>${"<b>".repeat(10)}</div><div>x</div>`), 11, "an end tag closes what it skips");
    assert.equal(htmlNestingDepth(`<svg>${'<path d="M0 0"/>'.repeat(1000)}</svg>`), 1, "in SVG, <x/> closes itself");
    assert.equal(htmlNestingDepth(`<div/>${"<div/>".repeat(9)}`), 10, "outside it, it does not");
    assert.equal(htmlNestingDepth(`<script>${"<div>".repeat(1000)}</script><style>a > b {}</style><!-- ${"<div>".repeat(1000)} -->`), 1);
    assert.equal(htmlNestingDepth(`<a title="x > y" href='<div>'><span class=a>x</span></a>`), 2, "a > in a quoted value does not end the tag");
  });

  test("Markdown at its nesting limit renders to HTML within the HTML limit", () => {
    const html = markdownToHtml(Buffer.from(indentedList(MAX_MARKDOWN_NESTING))).toString();
    assert.ok(htmlNestingDepth(html) <= MAX_HTML_NESTING, String(htmlNestingDepth(html)));
  });

  test("one level past the limit is refused, naming it, and 100,000 nested divs at once", () => {
    checkHtmlNesting("<div>".repeat(MAX_HTML_NESTING));
    assert.throws(() => checkHtmlNesting("<div>".repeat(MAX_HTML_NESTING + 1)), refusedNaming(MAX_HTML_NESTING));
    const divs = `${"<div>".repeat(100_000)}x${"</div>".repeat(100_000)}`;
    assert.throws(() => checkHtmlNesting(divs), refusedNaming(MAX_HTML_NESTING));
    assert.ok(timed(() => checkHtmlNesting(divs)) < 50);
  });

  test("unterminated tags, quotes and comments end the scan instead of rescanning the rest", () => {
    for (const html of ["<a ".repeat(200_000), `<a title="${"<div>".repeat(200_000)}`, "<!--".repeat(200_000), `<script>${"<".repeat(400_000)}`]) {
      assert.ok(timed(() => checkHtmlNesting(html)) < 100, html.slice(0, 20));
    }
  });
});
