import { stringify } from "csv-stringify/sync";
import type { GetUsageResponse } from "../../gen/ts-proto/docservice/v1/telemetry.js";

/**
 * GET /v1/usage as CSV, for invoicing: one row per period (each day, each
 * month, then the whole range), or with groupBy one row per value and period
 * (each month, then the whole range). Values come from browsers, so a cell
 * that a spreadsheet would run as a formula (=, +, -, @, tab, CR) is written
 * with a leading apostrophe.
 */
export function usageCsv(usage: GetUsageResponse): string {
  const range = `${usage.from}..${usage.to}`;
  const options = { escape_formulas: true, record_delimiter: "windows" as const };
  if (usage.grouped) {
    const { key, groups, otherValues } = usage.grouped;
    const rows = [...groups, ...(otherValues ? [{ ...otherValues, value: "(other values)" }] : [])].flatMap((group) => [
      ...group.byMonth.map((month) => [usage.licenseKey, key, group.value, month.month, month.documents, month.opens]),
      [usage.licenseKey, key, group.value, range, group.documents, group.opens],
    ]);
    return stringify([["licenseKey", "key", "value", "period", "documents", "opens"], ...rows], options);
  }
  const rows = [
    ...usage.byDay.map((day) => [day.date, day.documents, day.documentsWithoutContentId, day.opens]),
    ...usage.byMonth.map((month) => [month.month, month.documents, month.documentsWithoutContentId, month.opens]),
    [range, usage.documents, usage.documentsWithoutContentId, usage.opens],
  ].map((row) => [usage.licenseKey, ...row]);
  return stringify([["licenseKey", "period", "documents", "documentsWithoutContentId", "opens"], ...rows], options);
}
