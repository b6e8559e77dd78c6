/**
 * What the load runs against: the platform in one process on this machine
 * (embedded-target.ts), or a DocService on the test node, one pod per
 * component (cluster-target.ts).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ComponentName } from "../operator/crd.js";
import { corpusFile, corpusPath } from "../test/support/corpus.js";
import { makeDocx } from "../test/support/docx-fixtures.js";
import { textPdf } from "../test/support/pdf-fixtures.js";
import type { Sizing } from "./scenarios.js";

export interface Target {
  /** The k6 binary. */
  k6: string;
  /** The -e variables a scenario gets when it loads `component` (every scenario in check mode: undefined). */
  env(component?: ComponentName): Record<string, string>;
  /** CPU seconds used so far by what serves `component`: the platform's process tree, or the component's pod. */
  cpuSeconds(component?: ComponentName): number;
  /** Memory the component's pod uses now (its working set, MiB), where it has a pod of its own. */
  memoryMiB?(component: ComponentName): number;
  /**
   * After a step that held for k6: whether the component also kept up with
   * what k6 cannot see (the aggregator applied, within a few seconds, every
   * event the step reported); a reason when it did not.
   */
  fellBehind?(component: ComponentName, eventsSent: number): Promise<string | undefined>;
  /** True when other processes on the machine are not part of what is measured, so their load may explain a failing step. */
  sharesMachine: boolean;
  /** Each component's route, and how it is loaded. */
  sizings: Sizing[];
  /** The command that measures this target, for the profile's method. */
  command: string;
  /** For the profile's method: what ran, where, with which settings and fixtures. */
  description: string;
  stop(): Promise<void>;
}

export const CORPUS_DOCX = "1-page.docx";

/** The fixtures the scenarios open: a 1-page PDF and a 1-page DOCX, written into `dir`; and how the DOCX was made. */
export async function writeFixtures(dir: string): Promise<{ env: { PDF_FILE: string; DOCX_FILE: string }; docxFixture: string }> {
  const pdf = join(dir, "loadtest.pdf");
  writeFileSync(pdf, await textPdf(1));
  const docx = join(dir, "loadtest.docx");
  // The corpus's 1-page document (a real Word file); a generated one where the corpus is missing.
  const fromCorpus = existsSync(corpusPath(CORPUS_DOCX));
  writeFileSync(docx, fromCorpus ? corpusFile(CORPUS_DOCX) : makeDocx(["Load test.", "One page.", "Three paragraphs."]));
  return { env: { PDF_FILE: pdf, DOCX_FILE: docx }, docxFixture: fromCorpus ? `corpus ${CORPUS_DOCX}` : "a generated 3-paragraph DOCX" };
}
