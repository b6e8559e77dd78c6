import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the event loop; a non-zero exit is returned, not thrown. */
export async function tool(command: string, args: string[]): Promise<ToolResult> {
  try {
    const { stdout, stderr } = await run(command, args, { maxBuffer: 64 * 1024 * 1024, encoding: "utf8" });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof failure.code !== "number") throw error; // could not run at all
    return { code: failure.code, stdout: failure.stdout ?? "", stderr: failure.stderr ?? failure.message };
  }
}

/** `qpdf --check`: exit 0 means no errors and no warnings. */
export function qpdfCheck(file: string): Promise<ToolResult> {
  return tool("qpdf", ["--check", file]);
}

export async function pageCount(file: string): Promise<number> {
  const result = await tool("qpdf", ["--show-npages", file]);
  if (result.code !== 0) throw new Error(`qpdf --show-npages ${file} exited ${result.code}: ${result.stderr}`);
  return Number(result.stdout.trim());
}

/** The PDF's text, as `pdftotext -enc UTF-8` extracts it (reading order, no layout). */
export async function pdfText(file: string): Promise<string> {
  const result = await tool("pdftotext", ["-enc", "UTF-8", file, "-"]);
  if (result.code !== 0) throw new Error(`pdftotext ${file} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}
