import type { AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { ServiceError, type FieldIssue } from "../core/errors.js";
import { ANNOTATE_LIMITS, drawnSignatureKey } from "./annotate-request-schema.js";
import { contentControls, type ContentControl } from "./content-control.js";
import type { DocxPackage } from "./docx-package.js";
import { fillImage } from "./fill-image.js";
import { ImageParts } from "./image-parts.js";
import { fillTable } from "./fill-table.js";
import { fillText } from "./fill-text.js";
import { decodeImage, type ImageValue } from "./image-value.js";
import { signatureImage } from "./signature-image.js";

/**
 * Fills the template's content controls with the fields, all or nothing:
 * every field is matched and its value checked first, and any problem (a
 * template that cannot take a field: 422) is thrown with every other one in
 * `details` before anything is filled. The fields have kept the rules of
 * annotate-request-schema.ts (annotate-request-check.ts): this is the
 * template's side.
 *
 * The work is bounded before it starts: each control is found through an
 * index by tag and title, the fields may fill at most
 * ANNOTATE_LIMITS.maxControlFills controls in all, and each distinct image
 * or drawn signature is decoded or drawn once and stored once, however many
 * fields and controls show it (the request check allows at most
 * ANNOTATE_LIMITS.maxDrawnSignatures different drawings). Drawings are
 * encoded one at a time, off the main thread.
 */
export async function fillTemplate(docx: DocxPackage, fields: AnnotationField[]): Promise<void> {
  const controls = contentControls(docx.contentParts);
  const byTag = indexed(controls, (control) => control.tag);
  const byTitle = indexed(controls, (control) => control.title);
  const matches = fields.map((field) => (field.id ? byTag.get(field.id) : byTitle.get(field.group)) ?? []);
  const fillCount = matches.reduce((sum, matched) => sum + matched.length, 0);
  if (fillCount > ANNOTATE_LIMITS.maxControlFills) {
    throwIfAny([{ field: "fields", issue: `would fill ${fillCount} content controls (a group fills every control with its title); at most ${ANNOTATE_LIMITS.maxControlFills} are filled per request` }]);
  }
  let offered: string | undefined;
  const templateIssues: FieldIssue[] = [];
  // one decoding or drawing per distinct value: a thousand fields with one name draw it once
  const decoded = new Map<string, ImageValue | string>();
  const drawings = new Map<string, Drawing>();
  const media = new ImageParts(docx);
  const fills: Array<{ at: string; fill(): string | undefined }> = [];
  fields.forEach((field, index) => {
    const at = `fields[${index}]`;
    const matched = matches[index];
    const key = field.id ? `${at}.id` : `${at}.group`;
    if (matched.length === 0) {
      offered ??= inventory(controls);
      return templateIssues.push({ field: key, issue: `no content control is ${field.id ? `tagged "${field.id}"` : `titled "${field.group}"`}; the template has ${offered}` });
    }
    if (field.id && matched.length > 1) return templateIssues.push({ field: key, issue: `${matched.length} content controls are tagged "${field.id}": give them one title and fill them with group` });
    const misfit = matched.map((control) => misfitOf(field.type, control)).find(Boolean);
    if (misfit) return templateIssues.push({ field: `${at}.type`, issue: misfit });
    let image: (() => ImageValue | undefined) | undefined;
    if (field.type === "signature" && field.signerName) {
      const drawingKey = drawnSignatureKey(field.signerName, field.topLabel, field.bottomLabel);
      const drawing = drawings.get(drawingKey) ?? { field, at };
      drawings.set(drawingKey, drawing);
      image = () => drawing.image;
    } else if (field.type === "image" || field.type === "signature") {
      let result = decoded.get(field.value);
      if (result === undefined) decoded.set(field.value, (result = decodeImage(field.value)));
      if (typeof result === "string") return templateIssues.push({ field: `${at}.value`, issue: result });
      const value = result;
      image = () => value;
    }
    const dimensions = field.width > 0 && field.height > 0 ? { width: field.width, height: field.height } : undefined;
    for (const control of matched) {
      fills.push({
        at,
        fill: () => {
          if (image) return fillImage(control, image()!, dimensions, media);
          if (field.type === "table") return fillTable(control, field.rows.map((row) => row.cells), field.copyRowStyle);
          return fillText(control, field.value, field.keepTextNodeStyles);
        },
      });
    }
  });
  throwIfAny(templateIssues);
  for (const drawing of drawings.values()) {
    const result = await drawnSignature(drawing.field);
    if (typeof result === "string") templateIssues.push({ field: `${drawing.at}.options.signerName`, issue: result });
    else drawing.image = result;
  }
  throwIfAny(templateIssues);
  // what only filling finds (a control around table rows, a row wider than its table); the caller gets no document then
  throwIfAny(
    fills.flatMap(({ at, fill }) => {
      const issue = fill();
      return issue ? [{ field: at, issue }] : [];
    }),
  );
}

/** A signature to draw: the first field that asks for it (named when it cannot be drawn), and once drawn, its image. */
interface Drawing {
  field: AnnotationField;
  at: string;
  image?: ImageValue;
}

/** The signature image drawn of the field's name and labels, or why it cannot be. */
async function drawnSignature(field: AnnotationField): Promise<ImageValue | string> {
  try {
    return await signatureImage(field.signerName, { top: field.topLabel, bottom: field.bottomLabel });
  } catch {
    // the drawing is bounded (signature-image.ts), so this is Skia or libpng refusing something else in the name
    return "cannot be drawn as a signature image; send the image as value instead";
  }
}

/** The controls by a key (tag or title); controls without one are not listed. */
function indexed(controls: ContentControl[], keyOf: (control: ContentControl) => string): Map<string, ContentControl[]> {
  const index = new Map<string, ContentControl[]>();
  for (const control of controls) {
    const key = keyOf(control);
    if (!key) continue;
    const list = index.get(key);
    if (list) list.push(control);
    else index.set(key, [control]);
  }
  return index;
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
