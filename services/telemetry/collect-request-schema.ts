/**
 * The body of `POST /v1/collect` as clients send it, the reference client
 * included (`superdocVersion` is its name for `libraryVersion`). Unknown fields
 * are ignored, wrong types are 400s naming the field.
 */
import { z } from "zod";

export const COMMUNITY_LICENSE_KEY = "community-and-eval-agplv3";
export const MAX_EVENTS_PER_REPORT = 100;
export const MAX_DOCUMENT_ID_CHARS = 128;
export const MAX_METADATA_KEYS = 32;

const text = (max: number) => z.string({ error: "must be a string" }).max(max, `must be at most ${max} characters`);
const pixels = z.number({ error: "must be a number" }).int("must be an integer").min(0, "must not be negative").max(100_000);

const browserInfo = z.object(
  {
    userAgent: text(1000).default(""),
    currentUrl: text(4000).default(""),
    hostname: text(255).default(""),
    screenSize: z.object({ width: pixels.default(0), height: pixels.default(0) }, { error: "must be an object" }).default({ width: 0, height: 0 }),
  },
  { error: "must be an object" },
);

const event = z.object(
  {
    timestamp: z.iso.datetime({ offset: true, precision: 3, error: "must be an ISO 8601 time with milliseconds, e.g. 2026-11-21T09:30:00.000Z" }),
    documentId: text(MAX_DOCUMENT_ID_CHARS).min(1, "must not be empty"),
    documentCreatedAt: z.union([z.iso.datetime({ offset: true }), z.iso.date(), z.null()], { error: "must be an ISO 8601 time or null" }).default(null),
  },
  { error: "must be an object" },
);

export function collectRequestSchema(limits: { metadataMaxBytes: number }) {
  return z
    .object(
      {
        libraryVersion: text(64).optional(),
        superdocVersion: text(64).optional(),
        browserInfo: browserInfo.default({ userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } }),
        metadata: z
          .record(z.string().max(64, "keys must be at most 64 characters"), z.union([z.string(), z.number(), z.boolean()], { error: "values must be strings, numbers or booleans" }), {
            error: "must be a flat object",
          })
          .refine((value) => Object.keys(value).length <= MAX_METADATA_KEYS, `must have at most ${MAX_METADATA_KEYS} keys`)
          .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= limits.metadataMaxBytes, `must be at most ${limits.metadataMaxBytes} bytes as JSON`)
          .transform((value) => Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)])))
          .default({}),
        events: z
          .array(event, { error: "must be an array of events" })
          .min(1, "must have at least one event")
          .max(MAX_EVENTS_PER_REPORT, `must have at most ${MAX_EVENTS_PER_REPORT} events`),
      },
      { error: "must be a JSON object" },
    )
    .refine((body) => body.libraryVersion !== undefined || body.superdocVersion !== undefined, {
      message: "is required (or superdocVersion)",
      path: ["libraryVersion"],
    });
}

export type CollectRequestJson = z.output<ReturnType<typeof collectRequestSchema>>;
