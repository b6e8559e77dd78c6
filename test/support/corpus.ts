import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The shared DOCX corpus: ../shared/corpus/docx beside the checkout, as on CI and developer machines. */
export const CORPUS_DIR = fileURLToPath(new URL("../../../shared/corpus/docx/", import.meta.url));

/** A corpus file by its path inside the corpus, e.g. "poi/truncated62886.docx". */
export function corpusPath(name: string): string {
  return join(CORPUS_DIR, name);
}

export function corpusFile(name: string): Buffer {
  return readFileSync(corpusPath(name));
}

/** Every .docx under `dir` (the corpus by default), sorted, as absolute paths. */
export function corpusDocxPaths(dir = CORPUS_DIR): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return corpusDocxPaths(path);
      return entry.toLowerCase().endsWith(".docx") ? [path] : [];
    });
}
