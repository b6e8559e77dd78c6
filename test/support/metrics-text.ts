/**
 * Reading the Prometheus text format of /metrics in tests: the samples of one
 * metric, and every name a scrape declares. Not a test file itself.
 */

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The values of `name`'s samples whose labels include `labels`, in the order of the scrape. */
export function sampleValues(text: string, name: string, labels: Record<string, string> = {}): number[] {
  const values: number[] = [];
  for (const line of text.split("\n")) {
    const match = SAMPLE.exec(line);
    if (!match || match[1] !== name) continue;
    const own = Object.fromEntries([...(match[2] ?? "").matchAll(LABEL)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, wanted]) => own[key] === wanted)) values.push(Number(match[3]));
  }
  return values;
}

const SERIES_SUFFIXES: Record<string, string[]> = { histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"] };

/**
 * Every series name the scrape declares (# TYPE): a histogram's as its
 * _bucket, _sum and _count (a query of its bare name finds nothing), a
 * summary's as itself, _sum and _count.
 */
export function exportedMetricNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    for (const suffix of SERIES_SUFFIXES[type!] ?? [""]) names.add(name + suffix);
  }
  return names;
}
