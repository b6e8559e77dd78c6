import { marked } from "marked";

/**
 * Markdown (CommonMark with GitHub's tables and strikethrough) as the HTML
 * page LibreOffice's HTML import reads: LibreOffice 7.4 has no Markdown
 * import, so either backend converts the page instead.
 */
export function markdownToHtml(markdown: Buffer): Buffer {
  const body = marked.parse(markdown.toString("utf8"), { async: false, gfm: true });
  return Buffer.from(`<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body>\n${body}</body></html>\n`);
}
