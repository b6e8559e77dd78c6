import type { AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { ServiceError, validationError, type FieldIssue } from "../core/errors.js";
import { contentControls, type ContentControl } from "./content-control.js";
import type { DocxPackage } from "./docx-package.js";
import { fillImage } from "./fill-image.js";
import { fillTable } from "./fill-table.js";
import { fillText } from "./fill-text.js";
import { decodeImage, type ImageValue } from "./image-value.js";
import { signatureImage } from "./signature-image.js";

const TYPES = ["text", "image", "signature", "table"];

/**
 * Fills the template's content controls with the fields, all or nothing:
 * every field is matched and its value checked first, and any problem (a
 * request that breaks a rule: 400; a template that cannot take a field: 422)
 * is thrown with every other one in `details` before anything is filled.
 */
export function fillTemplate(docx: DocxPackage, fields: AnnotationField[]): void {
  const controls = contentControls(docx.contentParts);
  const requestIssues: FieldIssue[] = [];
  const templateIssues: FieldIssue[] = [];
  const fills: Array<{ at: string; fill(): string | undefined }> = [];
  fields.forEach((field, index) => {
    const at = `fields[${index}]`;
    const shape = shapeIssues(field, at);
    if (shape.length > 0) return requestIssues.push(...shape);
    const matched = field.id ? controls.filter((c) => c.tag === field.id) : controls.filter((c) => c.title === field.group);
    const key = field.id ? `${at}.id` : `${at}.group`;
    if (matched.length === 0) return templateIssues.push({ field: key, issue: `no content control is ${field.id ? `tagged "${field.id}"` : `titled "${field.group}"`}; the template has ${inventory(controls)}` });
    if (field.id && matched.length > 1) return templateIssues.push({ field: key, issue: `${matched.length} content controls are tagged "${field.id}": give them one title and fill them with group` });
    const misfit = matched.map((control) => misfitOf(field.type, control)).find(Boolean);
    if (misfit) return templateIssues.push({ field: `${at}.type`, issue: misfit });
    let image: ImageValue | undefined;
    if (field.type === "signature" && field.signerName) {
      image = signatureImage(field.signerName, { top: field.topLabel, bottom: field.bottomLabel });
    } else if (field.type === "image" || field.type === "signature") {
      const decoded = decodeImage(field.value);
      if (typeof decoded === "string") return templateIssues.push({ field: `${at}.value`, issue: decoded });
      image = decoded;
    }
    const dimensions = field.width > 0 && field.height > 0 ? { width: field.width, height: field.height } : undefined;
    for (const control of matched) {
      fills.push({
        at,
        fill: () => {
          if (image) return fillImage(docx, control, image, dimensions);
          if (field.type === "table") return fillTable(control, field.rows.map((row) => row.cells), field.copyRowStyle);
          return fillText(control, field.value, field.keepTextNodeStyles);
        },
      });
    }
  });
  if (requestIssues.length > 0) throw validationError(requestIssues);
  throwIfAny(templateIssues);
  // what only filling finds (a control around table rows, a row wider than its table); the caller gets no document then
  throwIfAny(
    fills.flatMap(({ at, fill }) => {
      const issue = fill();
      return issue ? [{ field: at, issue }] : [];
    }),
  );
}

function shapeIssues(field: AnnotationField, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (Boolean(field.id) === Boolean(field.group)) issues.push({ field: at, issue: "must have exactly one of id and group" });
  if (!TYPES.includes(field.type)) issues.push({ field: `${at}.type`, issue: `must be one of ${TYPES.join(", ")}` });
  if (field.type === "table" && field.rows.length === 0) issues.push({ field: `${at}.value`, issue: "must be an array of rows (arrays of strings) for a table" });
  if (field.type === "image" && !field.value) issues.push({ field: `${at}.value`, issue: "must be the image, a data URI or base64 PNG or JPEG" });
  if (field.type === "signature" && Boolean(field.value) === Boolean(field.signerName)) {
    issues.push({ field: `${at}.value`, issue: "a signature needs exactly one of value (its image) and options.signerName (to draw one)" });
  }
  if (field.type !== "signature" && (field.signerName || field.topLabel || field.bottomLabel)) {
    issues.push({ field: `${at}.options`, issue: "signerName, topLabel and bottomLabel are for signature fields" });
  }
  if ((field.width > 0) !== (field.height > 0)) issues.push({ field: `${at}.options.dimensions`, issue: "must have both width and height" });
  return issues;
}

/** Why a control cannot take a field of `type`, or undefined. */
function misfitOf(type: string, control: ContentControl): string | undefined {
  const kind = control.kind;
  if (type === "table") return control.table ? undefined : `${control.describe()} holds no table, so it cannot take a table`;
  if (type === "image" || type === "signature") return kind === "picture" ? undefined : `${control.describe()} is not a picture control, so it cannot take an image`;
  if (kind === "picture") return `${control.describe()} is a picture control: send an image or a signature`;
  if (kind === "other") return `${control.describe()} is a check box or building-block control, which takes no text`;
  return undefined;
}

/** The controls a template offers, for a message. */
function inventory(controls: ContentControl[]): string {
  if (controls.length === 0) return "no content controls";
  const names = [...new Set(controls.map((c) => (c.tag ? `tag "${c.tag}"` : `title "${c.title}"`)))];
  return names.length > 10 ? `${names.slice(0, 10).join(", ")} and ${names.length - 10} more` : names.join(", ");
}

function throwIfAny(issues: FieldIssue[]): void {
  if (issues.length === 0) return;
  throw new ServiceError("UNPROCESSABLE_DOCUMENT", `The template cannot take the fields: ${issues.map((i) => `${i.field}: ${i.issue}`).join("; ")}`, { details: issues });
}
