/**
 * Reading the project's Markdown as GitHub shows it: its fenced code blocks,
 * its links, and the anchors its headings get. Parsed with marked (a
 * dependency of the conversion module), so code spans and code blocks never
 * count as links.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { marked, type Token, type Tokens } from "marked";

export interface CodeBlock {
  /** The file, relative to the checkout. */
  file: string;
  /** Line of the opening fence, from 1. */
  line: number;
  /** The info string's first word, e.g. `sh`. */
  language: string;
  /** The rest of the info string, e.g. `not-run: needs a cluster`. */
  attributes: string;
  code: string;
}

/** Every Markdown file under `dir` (relative to `root`), sorted. */
export function markdownFilesUnder(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => relative(root, join(root, dir, name)))
    .sort();
}

function tokensOf(markdown: string): Token[] {
  const tokens = marked.lexer(markdown);
  const all: Token[] = [];
  marked.walkTokens(tokens, (token) => void all.push(token));
  return all;
}

/** The fenced code blocks of `file` (relative to `root`), in order. */
export function codeBlocks(root: string, file: string): CodeBlock[] {
  const markdown = readFileSync(join(root, file), "utf8");
  let searchFrom = 0;
  return tokensOf(markdown)
    .filter((token): token is Tokens.Code => token.type === "code" && (token as Tokens.Code).codeBlockStyle !== "indented")
    .map((token) => {
      const fence = markdown.indexOf(token.raw.trimStart().split("\n")[0], searchFrom);
      searchFrom = fence + 1;
      const [language, ...attributes] = (token.lang ?? "").split(/\s+/);
      return { file, line: markdown.slice(0, fence).split("\n").length, language, attributes: attributes.join(" "), code: token.text };
    });
}

/** The target of every link of the Markdown that points inside the repository (not `https:`, `mailto:`…). */
export function relativeLinks(markdown: string): string[] {
  return tokensOf(markdown)
    .filter((token): token is Tokens.Link | Tokens.Image => token.type === "link" || token.type === "image")
    .map((token) => token.href)
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith("//"));
}

/** A heading's text as GitHub renders it: code spans' text, links' text, no emphasis marks. */
function plainText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      if ("tokens" in token && token.tokens && token.type !== "text") return plainText(token.tokens);
      return token.type === "html" ? "" : "text" in token ? String(token.text) : "";
    })
    .join("");
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as `-`. */
export function githubSlug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of the Markdown's headings; a repeated heading gets `-1`, `-2`… as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const token of tokensOf(markdown)) {
    if (token.type !== "heading") continue;
    const slug = githubSlug(plainText((token as Tokens.Heading).tokens));
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
