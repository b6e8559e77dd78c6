/**
 * What a shell example in the docs shows it prints, and whether it did.
 *
 * The docs show output as comment lines right under the command that prints
 * it, with no blank line between (a comment at the top of a block or after a
 * blank line only explains):
 *
 *   curl -s http://localhost:8080/v1/collect …
 *   # 202 {"accepted":1}
 *
 * Such a line is an HTTP status, JSON (see json-shape.ts: `…` stands for
 * what varies; JSON may go on over the next comment lines until its brackets
 * close), both, or a line of text (`…` matches any text there). The outputs
 * shown must appear in the example's output in the order shown; the statuses
 * among the answers curl received (test/docs-examples.test.ts records them), in
 * that order, and an answer of 400 or more that the example does not show
 * fails it.
 */
import { jsonEnd, parseShape, shapeMismatch, type JsonShape } from "./json-shape.js";

export interface ShownOutput {
  /** Line in the file. */
  line: number;
  status?: number;
  json?: JsonShape;
  text?: string;
}

type OutputItem = { json: unknown } | { text: string };

/** The outputs an example whose code starts on line `firstLine` shows; throws on a shown JSON that is not one. */
export function shownOutputs(code: string, firstLine = 1): ShownOutput[] {
  const shown: ShownOutput[] = [];
  let underCommand = false;
  let open: { line: number; status?: number; text: string } | undefined;
  const close = (entry: { line: number; status?: number; text: string }) => {
    try {
      shown.push({ line: entry.line, status: entry.status, json: parseShape(entry.text) });
    } catch (error) {
      throw new Error(`line ${entry.line}: the JSON shown is not JSON with …: ${(error as Error).message}`);
    }
  };
  for (const [index, line] of code.split("\n").entries()) {
    const comment = /^\s*#\s?(.*)$/.exec(line)?.[1];
    if (open) {
      if (comment === undefined) throw new Error(`line ${open.line}: the JSON shown does not close`);
      open.text += `\n${comment}`;
      if (jsonEnd(open.text, 0) > 0) {
        close(open);
        open = undefined;
      }
      continue;
    }
    if (comment === undefined) {
      underCommand = line.trim() !== "";
      continue;
    }
    if (!underCommand) continue;
    const [, status, rest = ""] = /^(?:(\d{3})(?:\s+|$))?(.*)$/.exec(comment.trim())!;
    const entry = { line: firstLine + index, status: status ? Number(status) : undefined, text: rest };
    if (rest.startsWith("{") || rest.startsWith("[")) {
      if (jsonEnd(rest, 0) > 0) close(entry);
      else open = entry;
    } else shown.push({ line: entry.line, status: entry.status, text: rest || undefined });
  }
  if (open) throw new Error(`line ${open.line}: the JSON shown does not close`);
  return shown;
}

/** The output as JSON values (one may span lines, or follow another on its line) and the lines of text between them. */
function outputItems(output: string): OutputItem[] {
  const items: OutputItem[] = [];
  let pos = 0;
  while (pos < output.length) {
    while (/\s/.test(output[pos] ?? "")) pos++;
    if (pos >= output.length) break;
    if (output[pos] === "{" || output[pos] === "[") {
      const end = jsonEnd(output, pos);
      try {
        if (end > 0) {
          items.push({ json: JSON.parse(output.slice(pos, end)) });
          pos = end;
          continue;
        }
      } catch {
        // not JSON after all: a line of text
      }
    }
    const lineEnd = output.indexOf("\n", pos) < 0 ? output.length : output.indexOf("\n", pos);
    items.push({ text: output.slice(pos, lineEnd).trim() });
    pos = lineEnd;
  }
  return items;
}

function textPattern(text: string): RegExp {
  return new RegExp(`^${text.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/** Why the example's output and statuses are not what it shows; empty when they are. */
export function outputProblems(shown: ShownOutput[], output: string, statuses: number[]): string[] {
  const problems: string[] = [];
  const items = outputItems(output);
  let next = 0;
  for (const expected of shown.filter((entry) => entry.json || entry.text)) {
    const matches = (item: OutputItem) =>
      expected.json ? "json" in item && shapeMismatch(expected.json, item.json) === undefined : "text" in item && textPattern(expected.text!).test(item.text);
    const found = items.findIndex((item, i) => i >= next && matches(item));
    if (found < 0) {
      const nearest = expected.json ? items.slice(next).find((item) => "json" in item) : undefined;
      const why = nearest && "json" in nearest ? ` (next JSON: ${shapeMismatch(expected.json!, nearest.json)})` : "";
      problems.push(`line ${expected.line}: nothing printed matches what it shows${why}`);
    } else next = found + 1;
  }
  const expectedStatuses = shown.flatMap((entry) => (entry.status === undefined ? [] : [entry]));
  let expectedNext = 0;
  for (const status of statuses) {
    if (expectedStatuses[expectedNext]?.status === status) expectedNext++;
    else if (status >= 400) problems.push(`curl received ${status}, which the example does not show`);
  }
  for (const missing of expectedStatuses.slice(expectedNext)) problems.push(`line ${missing.line}: curl never received the ${missing.status} shown`);
  return problems;
}
