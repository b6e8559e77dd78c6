/** The token of an `Authorization: Bearer <token>` header, "" otherwise. */
export function bearerToken(header: string | null | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1] : "";
}
