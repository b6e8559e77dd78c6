import { marked } from "marked";
import { checkMarkdownNesting } from "./nesting-limits.js";

/**
 * Markdown (CommonMark with GitHub's tables and strikethrough) as the HTML
 * page LibreOffice's HTML import reads: LibreOffice 7.4 has no Markdown
 * import, so either backend converts the page instead. Block quotes and
 * lists nested deeper than MAX_MARKDOWN_NESTING are refused (422) first.
 */
export function markdownToHtml(markdown: Buffer): Buffer {
  const text = markdown.toString("utf8");
  checkMarkdownNesting(text);
  const body = marked.parse(text, { async: false, gfm: true });
  return Buffer.from(`<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body>\n${body}</body></html>\n`);
}
