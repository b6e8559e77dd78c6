// A document session: one identity for every export of one opened document
// (SPEC 4.6, rules 2 and 3), with usage reporting on or off.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { strToU8 } from "fflate";
import { computeDocumentId, createUsageTracker, openDocumentSession, type CollectRequest } from "./index.js";
import { corpusDocx, rezip } from "./test/docx.js";

const BOTH = "1-page.docx";
const NEITHER = "korean_alignment_autospace.docx";
const OPENED = new Date("2026-03-04T05:06:07.890Z");

/** An export of `docx` after an edit: what an editor writes back, without the GUID or time it never had. */
const exportAfterEdit = (docx: Uint8Array, text: string) =>
  rezip(docx, (parts) => {
    const xml = new TextDecoder().decode(parts["word/document.xml"]);
    parts["word/document.xml"] = strToU8(xml.replace("<w:body>", `<w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p>`));
  });

describe("openDocumentSession", () => {
  test("a file without GUID or created time: counted by its bytes; every export then carries one GUID and time, and opens as one document", () => {
    const docx = corpusDocx(NEITHER);
    const session = openDocumentSession(docx, OPENED);
    assert.equal(session.documentId, computeDocumentId(docx).documentId, "this open: the hash of the bytes (rule 2)");
    assert.equal(session.documentCreatedAt, null);
    assert.match(session.documentGuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(session.exportCreatedAt, "2026-03-04T05:06:00Z");

    const first = session.stamp(exportAfterEdit(docx, "first export"));
    const second = session.stamp(exportAfterEdit(docx, "second export, later"));
    const [a, b] = [computeDocumentId(first), computeDocumentId(second)];
    assert.equal(a.documentGuid, session.documentGuid);
    assert.equal(a.documentCreatedAt, session.exportCreatedAt);
    assert.deepEqual(a, b, "both exports open as the same document (rule 3)");
    // and opening an export again keeps that identity through the next export
    const reopened = openDocumentSession(first);
    assert.equal(reopened.documentId, a.documentId);
    assert.deepEqual(computeDocumentId(reopened.stamp(exportAfterEdit(first, "third"))), a);
  });

  test("a file with both: its own GUID and time, exports returned as they are", () => {
    const docx = corpusDocx(BOTH);
    const session = openDocumentSession(docx, OPENED);
    const own = computeDocumentId(docx);
    assert.equal(session.documentId, own.documentId);
    assert.equal(session.documentGuid, own.documentGuid);
    assert.equal(session.exportCreatedAt, own.documentCreatedAt);
    const exported = exportAfterEdit(docx, "edited");
    assert.equal(session.stamp(exported), exported);
    assert.equal(computeDocumentId(exported).documentId, own.documentId);
  });

  test("two sessions of one file without metadata choose two GUIDs: each opened copy is its own document from its first export on", () => {
    const docx = corpusDocx(NEITHER);
    const [one, two] = [openDocumentSession(docx, OPENED), openDocumentSession(docx, OPENED)];
    assert.equal(one.documentId, two.documentId, "the same file opened twice counts once (rule 4)");
    assert.notEqual(one.documentGuid, two.documentGuid);
  });
});

describe("UsageTracker.openDocument", () => {
  for (const enabled of [true, false]) {
    test(`telemetry ${enabled ? "enabled: the open is reported" : "disabled: nothing is sent"}, and the session stamps exports either way`, () => {
      const calls: Array<{ url: string; init: CollectRequest }> = [];
      const tracker = createUsageTracker({
        telemetry: { enabled, endpoint: "https://collect.example.com/v1/collect" },
        fetch: (url, init) => (calls.push({ url, init }), Promise.resolve(new Response(null, { status: 202 }))),
      });
      const docx = corpusDocx(NEITHER);
      const session = tracker.openDocument(docx)!;
      assert.equal(session.documentId, computeDocumentId(docx).documentId);
      assert.equal(calls.length, enabled ? 1 : 0);
      if (enabled) assert.equal(JSON.parse(calls[0]!.init.body).events[0].documentId, session.documentId);
      const stamped = session.stamp(exportAfterEdit(docx, "export"));
      assert.equal(computeDocumentId(stamped).documentGuid, session.documentGuid);
    });
  }

  test("what is not bytes gives no session and sends nothing; bytes that are no DOCX are counted by their hash", () => {
    const calls: unknown[] = [];
    const tracker = createUsageTracker({ telemetry: { endpoint: "https://collect.example.com/v1/collect" }, fetch: (...call) => calls.push(call) });
    for (const input of [undefined, null, "file.docx", {}]) assert.equal(tracker.openDocument(input as never), null);
    assert.equal(calls.length, 0);
    const bytes = new TextEncoder().encode("plain text");
    assert.equal(tracker.openDocument(bytes)!.documentId, computeDocumentId(bytes).documentId);
    assert.equal(calls.length, 1);
  });
});
