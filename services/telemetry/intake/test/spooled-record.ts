import type { UsageRecord } from "../../usage-record.js";

/** The usage record numbered `n` (event id `event-<n>`), as the intake's tests spool and deliver them. */
export const spooledRecord = (n: number): UsageRecord => ({
  eventId: `event-${n}`,
  licenseKey: "community-and-eval-agplv3",
  documentId: `HASH-${n}`,
  documentCreatedAt: null,
  openedAt: "2026-11-21T09:00:00.000Z",
  receivedAt: "2026-11-21T09:00:01.000Z",
  libraryVersion: "1.0.0",
  hostname: "app.example.test",
  metadata: {},
});
