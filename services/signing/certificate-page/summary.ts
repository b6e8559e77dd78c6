// Readable one-line summaries of audit events for the certificate page.
import type { AuditEvent } from "../model.js";
import { truncate } from "./text.js";

/** Longest rendering of one data value (a pasted document in a field must not fill pages). */
export const MAX_VALUE_CHARS = 500;

export function formatTime(date: Date): string {
  return Number.isNaN(date.getTime()) ? "(invalid time)" : date.toISOString();
}

function show(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) text = "";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return truncate(text, MAX_VALUE_CHARS);
}

const quoted = (value: unknown) => `“${show(value)}”`;

function extras(data: Record<string, unknown>, known: readonly string[]): string {
  const rest = Object.entries(data).filter(([key]) => !known.includes(key));
  return rest.length ? `; ${rest.map(([key, value]) => `${key}: ${show(value)}`).join("; ")}` : "";
}

export function summarizeEvent(event: AuditEvent): string {
  const data: Record<string, unknown> =
    event.data && typeof event.data === "object" && !Array.isArray(event.data) ? event.data : {};
  switch (event.type) {
    case "ready":
      return `Document shown${extras(data, [])}`;
    case "scroll": {
      const percent = data.percent;
      const head = percent === undefined ? "Scrolled" : `Scrolled to ${show(percent)} %`;
      return head + extras(data, ["percent"]);
    }
    case "field_change": {
      const field = data.fieldId === undefined ? "Field" : `Field ${quoted(data.fieldId)}`;
      const head =
        data.previousValue === undefined
          ? `${field} set to ${quoted(data.value)}`
          : `${field} changed from ${quoted(data.previousValue)} to ${quoted(data.value)}`;
      return head + extras(data, ["fieldId", "value", "previousValue"]);
    }
    case "submit":
      return `Submitted${extras(data, [])}`;
    default: {
      const text = extras(data, []).slice(2);
      return text || "—";
    }
  }
}
