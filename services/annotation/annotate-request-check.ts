/**
 * The one place an AnnotateRequest message's fields are checked: against the
 * rules and limits of annotate-request-schema.ts, under the field names of
 * `POST /v1/annotate`, every problem in one VALIDATION_ERROR, before the
 * template is fetched or read. The message is the same whoever sent it (the
 * /v1 route, a gRPC, Connect or gRPC-Web client), so AnnotationService checks
 * it here whoever sent it.
 */
import type { AnnotateRequest, AnnotationField } from "../../gen/ts-proto/docservice/v1/annotation.js";
import { validationError, type FieldIssue } from "../core/errors.js";
import { fieldIssues } from "../core/field-issues.js";
import { ANNOTATE_LIMITS, fieldsSchema, type AnnotateFieldJson } from "./annotate-request-schema.js";

/** Throws a VALIDATION_ERROR naming every field at fault; returns when the fields keep every rule. */
export function checkAnnotateFields(request: AnnotateRequest): void {
  const { fields } = request;
  // the count first: a message of 100,000 fields is answered without looking at any of them
  if (fields.length < 1 || fields.length > ANNOTATE_LIMITS.maxFields) {
    throw validationError([{ field: "fields", issue: fields.length < 1 ? "must have at least one field" : `must have at most ${ANNOTATE_LIMITS.maxFields} fields` }]);
  }
  const issues: FieldIssue[] = [];
  const json = fields.map((field, index) => {
    if (field.rows.length > 0 && field.value) issues.push({ field: `fields[${index}].value`, issue: "a table's rows go in rows, any other value in value: not both" });
    return fieldJson(field);
  });
  const result = fieldsSchema.safeParse(json);
  if (!result.success) issues.push(...fieldIssues(result.error, { prefix: "fields" }));
  if (issues.length > 0) throw validationError(issues);
}

/**
 * A field as /v1/annotate's JSON writes it, for the schema: protobuf's "" and
 * 0 are absent values (but a text may be ""), and a table's rows are its value.
 */
function fieldJson(field: AnnotationField): AnnotateFieldJson {
  const value = field.rows.length > 0 ? field.rows.map((row) => row.cells) : field.type === "text" || field.value ? field.value : undefined;
  const options = {
    ...(field.keepTextNodeStyles ? { keepTextNodeStyles: true } : {}),
    ...(field.copyRowStyle ? { copyRowStyle: true } : {}),
    ...(field.width || field.height ? { dimensions: { width: field.width, height: field.height } } : {}),
    ...(field.signerName ? { signerName: field.signerName } : {}),
    ...(field.topLabel ? { topLabel: field.topLabel } : {}),
    ...(field.bottomLabel ? { bottomLabel: field.bottomLabel } : {}),
  };
  return {
    ...(field.id ? { id: field.id } : {}),
    ...(field.group ? { group: field.group } : {}),
    type: field.type as AnnotateFieldJson["type"],
    ...(value === undefined ? {} : { value }),
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}
