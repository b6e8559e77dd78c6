/**
 * One opened document, from its open to its exports: the id its open counts
 * under, and the GUID and created time that every export of it carries. A file
 * that lacks them has them chosen once, when it is opened, so that all exports
 * of one opened document share one identity and the next open of any of them
 * finds it (SPEC 4.6, rules 2 and 3), whether usage reporting is on or off.
 */
import { computeDocumentId, type DocumentIdentity } from "./document-id.js";
import { stampDocument, wordTimestamp } from "./stamp.js";
import { randomUuid } from "./uuid.js";

export interface DocumentSession extends DocumentIdentity {
  /** The GUID every export carries: the file's own, or one chosen at open. */
  readonly documentGuid: string;
  /** The dcterms:created text every export carries: the file's own, or the minute of the open. */
  readonly exportCreatedAt: string;
  /**
   * The export `docx` with this session's GUID and created time written where
   * it lacks them (the export itself when it has both).
   *
   * @throws ZipError or PackageError when `docx` is not a DOCX package.
   */
  stamp(docx: Uint8Array | ArrayBuffer): Uint8Array;
}

/** The session of the DOCX `docx`, opened at `now` (default: the current time). Never throws: a file that is no DOCX is identified by its bytes. */
export function openDocumentSession(docx: Uint8Array | ArrayBuffer, now: Date = new Date()): DocumentSession {
  const { documentId, documentCreatedAt, documentGuid } = computeDocumentId(docx);
  const guid = documentGuid ?? randomUuid();
  const created = documentCreatedAt ?? wordTimestamp(now);
  return {
    documentId,
    documentCreatedAt,
    documentGuid: guid,
    exportCreatedAt: created,
    stamp: (exported) => stampDocument(exported, { documentGuid: guid, documentCreatedAt: created }),
  };
}
