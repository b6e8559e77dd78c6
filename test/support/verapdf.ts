/**
 * veraPDF as the PDF/A (and PDF/UA) validator of the conversion tests: the
 * `verapdf` CLI of scripts/testenv/verapdf.sh run with a fixed flavour, its JSON
 * report parsed. One run is one JVM (about 0.7 s to start), so validateMany
 * validates a whole batch in a single run. Not a test file itself.
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cacheBin } from "./cache.js";
import { tool } from "./pdf-tools.js";

/** veraPDF's built-in profiles used here: PDF/A-2b, PDF/A-3b, PDF/UA-1. */
export type PdfAFlavour = "2b" | "3b" | "ua1";

/** A rule of the profile that the file breaks. */
export interface PdfARuleFailure {
  /** veraPDF's rule id, "<clause>-<test number>", e.g. "6.6.2.1-1" (PDF/A-2: catalog without XMP metadata). */
  rule: string;
  /** e.g. "ISO 19005-2:2011", "ISO 14289-1:2014" */
  specification: string;
  description: string;
  /** How many objects of the file break the rule. */
  failedChecks: number;
  /** The first failing object's message, and where it is (e.g. "root/document[0]/pages[0](1 0 obj PDPage)"). */
  message: string | null;
  context: string | null;
}

export interface PdfAResult {
  /** The absolute path veraPDF validated. */
  file: string;
  compliant: boolean;
  /** The profile veraPDF applied, e.g. "PDF/A-2B validation profile". */
  profile: string | null;
  failures: PdfARuleFailure[];
  /** Why veraPDF could not validate the file at all (not a PDF, encrypted, …); `compliant` is then false. */
  error: string | null;
}

/** The parts of veraPDF's JSON report (`--format json`) read here. */
interface VeraReport {
  report: {
    jobs: {
      itemDetails: { name: string };
      validationResult?: {
        compliant: boolean;
        profileName: string;
        details: {
          ruleSummaries: {
            specification: string;
            clause: string;
            testNumber: number;
            description: string;
            failedChecks: number;
            checks: { context: string; errorMessage?: string }[];
          }[];
        };
      }[];
      taskException?: { type: string; exceptionMessage?: string; exception?: string };
    }[];
  };
}

/** Validates one PDF (bytes or a file path) against the flavour's profile. */
export async function validatePdfA(pdf: Buffer | string, flavour: PdfAFlavour): Promise<PdfAResult> {
  if (typeof pdf === "string") return (await validateMany([pdf], flavour))[0]!;
  const directory = await mkdtemp(join(tmpdir(), "docservice-verapdf-"));
  try {
    const file = join(directory, "document.pdf");
    await writeFile(file, pdf);
    return (await validateMany([file], flavour))[0]!;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Validates every file in one veraPDF run; results in the order of `paths`.
 * Rejects when a path is not a regular file or veraPDF's report lacks one of
 * them (veraPDF itself skips missing files and expands directories).
 */
export async function validateMany(paths: string[], flavour: PdfAFlavour): Promise<PdfAResult[]> {
  const files = paths.map((path) => resolve(path));
  const unique = [...new Set(files)];
  if (unique.length === 0) return [];
  for (const file of unique) {
    if (!(await stat(file)).isFile()) throw new Error(`${file} is not a file`);
  }
  // One failing object per rule is enough for a message; failedChecks still counts all.
  const args = ["--flavour", flavour, "--format", "json", "--maxfailuresdisplayed", "1", "--nonpdfext", "--", ...unique];
  const result = await tool(cacheBin("verapdf"), args);
  // Exit 0: all compliant, 1: some not, 7: some not parsed, 8: some encrypted; the report covers all of these.
  let report: VeraReport;
  try {
    report = JSON.parse(result.stdout) as VeraReport;
  } catch {
    throw new Error(`verapdf exited ${result.code} without a JSON report: ${result.stderr.trim() || result.stdout.slice(0, 2000)}`);
  }
  const byFile = new Map(report.report.jobs.map((job) => [job.itemDetails.name, job]));
  return files.map((file) => {
    const job = byFile.get(file);
    if (!job) throw new Error(`verapdf's report has no result for ${file} (exit ${result.code}): ${result.stderr.trim()}`);
    const validations = job.validationResult ?? [];
    const failures = validations.flatMap((validation) =>
      validation.details.ruleSummaries.map((rule) => ({
        rule: `${rule.clause}-${rule.testNumber}`,
        specification: rule.specification,
        description: rule.description,
        failedChecks: rule.failedChecks,
        message: rule.checks[0]?.errorMessage ?? null,
        context: rule.checks[0]?.context ?? null,
      })),
    );
    const exception = job.taskException;
    const error = exception ? `${exception.type}: ${exception.exceptionMessage ?? exception.exception ?? "failed"}` : null;
    return {
      file,
      compliant: error === null && validations.length > 0 && validations.every((validation) => validation.compliant),
      profile: validations[0]?.profileName ?? null,
      failures,
      error,
    };
  });
}

/** One line per failed rule (or the error), for assertion messages. */
export function describePdfAResult(result: PdfAResult): string {
  if (result.error) return `${result.file}: ${result.error}`;
  if (result.compliant) return `${result.file}: compliant with ${result.profile}`;
  return [
    `${result.file}: not compliant with ${result.profile}`,
    ...result.failures.map((failure) => `  ${failure.rule} (${failure.failedChecks}x): ${failure.message ?? failure.description}`),
  ].join("\n");
}
