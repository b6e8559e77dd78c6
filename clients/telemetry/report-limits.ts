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
} as const;
