/**
 * The limits of one usage report, the same on both sides: this library keeps
 * what it sends within them, and the platform's /v1/collect (which imports
 * this file) holds every report to them. Metadata has its own, in metadata.ts.
 */
export const REPORT_LIMITS = {
  /** Events in one report. */
  maxEvents: 100,
  /** Characters of a documentId. */
  maxDocumentIdChars: 128,
  /** Characters of each text; longer browser texts are cut to this by the client. */
  maxTextChars: { libraryVersion: 64, userAgent: 1000, currentUrl: 4000, hostname: 255, documentCreatedAt: 64 },
  /** Largest screen width or height, in pixels. */
  maxScreenPixels: 100_000,
  /**
   * When an event may say it happened (its `timestamp`): see eventTimeWindow.
   * `earliest`, 2000-01-01 UTC, is before any open this library or the
   * reference client can report (they send the time of the open as they send
   * the report: SPEC 4.5 has no queue and no retry), and after the times a
   * wrong clock reads (0, 1970, 1601), which would count opens on a day long
   * gone. `maxAheadMs`, a day past the receiver's clock: a client's clock set
   * to the wrong time zone is off by at most 14 hours, drift by minutes; a
   * time further ahead can only be wrong, and would count on a day to come.
   */
  eventTime: { earliest: "2000-01-01T00:00:00.000Z", maxAheadMs: 24 * 3600 * 1000 },
} as const;

const EARLIEST_EVENT_TIME = Date.parse(REPORT_LIMITS.eventTime.earliest);

/** The times an event may have, as one receiver judges the events of one report. */
export interface EventTimeWindow {
  /** Milliseconds since the epoch, inclusive. */
  readonly earliest: number;
  readonly latest: number;
  /** What a sender of a time outside is told. */
  readonly issue: string;
}

/**
 * The event times a receiver whose clock reads `now` (ms since the epoch)
 * accepts: from REPORT_LIMITS.eventTime.earliest to maxAheadMs past `now`.
 * Decided once per report, before its events are looked at, so every event of
 * it is judged alike. The platform refuses a report with a time outside (400
 * naming `events[i].timestamp`); this library does not send one whose open its
 * own clock dates before `earliest` (the receiver's clock it cannot know).
 */
export function eventTimeWindow(now: number): EventTimeWindow {
  const latest = now + REPORT_LIMITS.eventTime.maxAheadMs;
  return { earliest: EARLIEST_EVENT_TIME, latest, issue: `must be from ${REPORT_LIMITS.eventTime.earliest} to a day past the server's clock (${new Date(latest).toISOString()})` };
}

/** Whether `time` (ms since the epoch; NaN never) is within `window`. */
export function isWithinEventTimeWindow(window: EventTimeWindow, time: number): boolean {
  return time >= window.earliest && time <= window.latest;
}
