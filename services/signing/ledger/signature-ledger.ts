/**
 * Remembers signed documents by `eventId` (per API key) so a repeated request
 * gets the same document back, and a different request with a used `eventId`
 * is refused. A claim is taken before signing, so two concurrent requests with
 * one `eventId` cannot both sign.
 */
export type Claim =
  | { kind: "claimed" }
  | { kind: "replay"; document: Buffer }
  /** The eventId was used with a different request. */
  | { kind: "conflict" }
  /** The same request is being signed right now. */
  | { kind: "in-progress" };

export interface SignatureLedger {
  /** Claims `eventId` for a request whose fingerprint is `requestHash`; a claim not completed within `pendingMs` lapses. */
  claim(scope: string, eventId: string, requestHash: string, pendingMs: number): Promise<Claim>;
  /** Stores the signed document for `ttlMs`. */
  complete(scope: string, eventId: string, requestHash: string, document: Buffer, ttlMs: number): Promise<void>;
  /** Gives up a claim after a failure, so the request can be retried. */
  release(scope: string, eventId: string, requestHash: string): Promise<void>;
  close(): Promise<void>;
}
