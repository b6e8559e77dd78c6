/**
 * The rules and limits of an annotate request, in one place. {@link annotateSchema}
 * is the contract of `POST /v1/annotate` as /openapi.json states it;
 * {@link fieldsSchema} is also what AnnotationService holds every
 * AnnotateRequest message to (annotate-request-check.ts), so a field over
 * gRPC, Connect or gRPC-Web meets the same limits, with the same field names
 * and issues, as one sent to /v1.
 */
import { z } from "zod";
import { documentSchema } from "../request-body/document-body.js";

/** What one request may ask for: every count and length is decided before the template is read. */
export const ANNOTATE_LIMITS = {
  /** Fields in one request. */
  maxFields: 1000,
  /** Characters of an id (a control's tag) or a group (its title). */
  maxKeyChars: 255,
  /** Characters of a text value, or of an image as base64 or a data URI. */
  maxValueChars: 16 * 1024 * 1024,
  /** Rows appended by one table field, cells in each, and characters in each cell. */
  maxRows: 10_000,
  maxCells: 64,
  maxCellChars: 10_000,
  /** Characters of a drawn signature's name and of each of its labels. */
  maxLabelChars: 200,
  /**
   * Different signatures drawn from a name (signerName and labels) in one request; fields that repeat one are drawn once.
   * A drawing costs up to about 10 ms of CPU (its PNG), so this bounds a request's drawing to about half a second.
   */
  maxDrawnSignatures: 50,
  /** Pixels of an image's width or height in options.dimensions. */
  maxDimensionPx: 10_000,
  /** Content controls the fields fill in all (a group fills every control with its title): checked against the template, a 422. */
  maxControlFills: 10_000,
} as const;

const L = ANNOTATE_LIMITS;

const key = z.string({ error: "must be a string" }).min(1, "must not be empty").max(L.maxKeyChars, `must be at most ${L.maxKeyChars} characters`).optional();
const label = z.string({ error: "must be a string" }).min(1, "must not be empty").max(L.maxLabelChars, `must be at most ${L.maxLabelChars} characters`).optional();
const pixels = z.number({ error: "must be a number" }).int("must be a whole number").min(1, "must be at least 1").max(L.maxDimensionPx, `must be at most ${L.maxDimensionPx}`);
const rows = z
  .array(z.array(z.string({ error: "must be a string" }).max(L.maxCellChars, `must be at most ${L.maxCellChars} characters`), { error: "must be an array of strings" }).max(L.maxCells, `must have at most ${L.maxCells} cells`))
  .min(1, "must have at least one row")
  .max(L.maxRows, `must have at most ${L.maxRows} rows`);

/** What is wrong with a value neither a string nor rows: for an array, the first problem its rows have (zod would only say that neither fits). */
function valueIssue(issue: { code?: string; input?: unknown; errors?: Array<Array<{ path: PropertyKey[]; message: string }>> }): string {
  const rowsIssue = issue.code === "invalid_union" && Array.isArray(issue.input) ? issue.errors?.[1]?.[0] : undefined;
  if (!rowsIssue) return "must be a string, or for a table an array of rows (arrays of strings)";
  const [row, cell] = rowsIssue.path;
  const where = row === undefined ? "" : cell === undefined ? `row ${String(row)} ` : `row ${String(row)}, cell ${String(cell)} `;
  return `${where}${rowsIssue.message}`;
}

export const fieldSchema = z
  .strictObject(
    {
      id: key.meta({ description: "The tag (w:tag) of the one content control to fill." }),
      group: key.meta({ description: "The title (w:alias) of every content control to fill." }),
      type: z.enum(["text", "image", "signature", "table"], { error: "must be one of text, image, signature, table" }),
      value: z
        .union([z.string().max(L.maxValueChars, `must be at most ${L.maxValueChars} characters`), rows], { error: valueIssue })
        .optional()
        .meta({ description: "Text; an image as a data URI or base64 PNG or JPEG (image, signature); rows of cells' text (table). A signature may have options.signerName instead." }),
      options: z
        .strictObject(
          {
            keepTextNodeStyles: z.boolean({ error: "must be true or false" }).optional().meta({ description: "Text: keep the run style of the template's text." }),
            copyRowStyle: z.boolean({ error: "must be true or false" }).optional().meta({ description: "Table: style new rows as the table's last row." }),
            dimensions: z
              .strictObject({ width: pixels, height: pixels }, { error: "must be {width, height}" })
              .optional()
              .meta({ description: "Image: its box in pixels (96 per inch); without it, fitted in the control's box." }),
            signerName: label.meta({ description: "Signature without a value: a signature image is drawn of this name." }),
            topLabel: label.meta({ description: "Drawn signature: a line above the name, e.g. \"Signed by\"." }),
            bottomLabel: label.meta({ description: "Drawn signature: a line below the name, e.g. the date." }),
          },
          { error: "must be an object" },
        )
        .optional(),
    },
    { error: "must be an object" },
  )
  .refine((field) => (field.id === undefined) !== (field.group === undefined), "must have exactly one of id and group")
  .refine((field) => field.value === undefined || (field.type === "table") === Array.isArray(field.value), { message: "must be an array of rows for a table, and a string otherwise", path: ["value"] })
  .refine((field) => field.value !== undefined || (field.type === "signature" && field.options?.signerName !== undefined), {
    message: "is required (a signature may have options.signerName instead)",
    path: ["value"],
  })
  .refine((field) => field.type !== "signature" || field.value === undefined || field.options?.signerName === undefined, {
    message: "a signature needs exactly one of value (its image) and options.signerName (to draw one)",
    path: ["value"],
  })
  .refine((field) => field.type === "signature" || [field.options?.signerName, field.options?.topLabel, field.options?.bottomLabel].every((text) => text === undefined), {
    message: "signerName, topLabel and bottomLabel are for signature fields",
    path: ["options"],
  });

/** What decides a drawn signature's image: two fields with the same key draw one image. */
export function drawnSignatureKey(signerName: string, topLabel = "", bottomLabel = ""): string {
  return JSON.stringify([signerName, topLabel, bottomLabel]);
}

export const fieldsSchema = z
  .array(fieldSchema, { error: "must be an array" })
  .min(1, "must have at least one field")
  .max(L.maxFields, `must have at most ${L.maxFields} fields`)
  .superRefine((fields, context) => {
    const drawn = new Set<string>();
    const beyond = fields.findIndex((field) => {
      const options = field.options;
      if (field.type !== "signature" || options?.signerName === undefined) return false;
      drawn.add(drawnSignatureKey(options.signerName, options.topLabel, options.bottomLabel));
      return drawn.size > L.maxDrawnSignatures;
    });
    if (beyond >= 0) {
      context.addIssue({
        code: "custom",
        path: [beyond, "options", "signerName"],
        message: `is one more signature to draw than the ${L.maxDrawnSignatures} different ones a request may draw; send its image as value instead`,
      });
    }
  });

export const annotateSchema = z.strictObject({ document: documentSchema, fields: fieldsSchema }, { error: "must be a JSON object" });

export type AnnotateJson = z.infer<typeof annotateSchema>;
export type AnnotateFieldJson = z.infer<typeof fieldSchema>;
