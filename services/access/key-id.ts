/**
 * The shape of a caller's key id, as a request carries it from the gateway or
 * the gRPC guard to a capability (the signing ledger scopes eventIds by it):
 * the hex SHA-256 of the API key (keys/api-key.ts, keyIdOf).
 */
const KEY_ID = /^[0-9a-f]{64}$/;

export function isKeyId(text: string): boolean {
  return KEY_ID.test(text);
}
