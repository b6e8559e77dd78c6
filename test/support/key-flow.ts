import type { Mailpit } from "./mailpit.js";

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
}

/** A JSON request to the gateway. */
export async function call(base: string, path: string, init: RequestInit & { apiKey?: string } = {}): Promise<HttpResult> {
  const headers = new Headers(init.headers);
  if (init.apiKey) headers.set("Authorization", `Bearer ${init.apiKey}`);
  const response = await fetch(`${base}${path}`, { ...init, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export function codeIn(text: string): string {
  const match = /code is (\d{6})/.exec(text);
  if (!match) throw new Error(`no code in mail: ${text}`);
  return match[1];
}

/** Registers the address and returns the code Mailpit received for it. */
export async function registerAndReadCode(base: string, email: string, mailpit: Mailpit): Promise<string> {
  const after = new Date(Date.now() - 1000);
  const registered = await call(base, `/v1/auth/register?email=${encodeURIComponent(email)}`);
  if (registered.status !== 200) throw new Error(`register answered ${registered.status}: ${JSON.stringify(registered.body)}`);
  const mail = await mailpit.latestMessageTo(email, { after });
  return codeIn(mail.text);
}

/** The full flow: register, read the mail, verify; returns the API key. */
export async function issueKey(base: string, email: string, mailpit: Mailpit): Promise<string> {
  const code = await registerAndReadCode(base, email, mailpit);
  const verified = await call(base, `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}: ${JSON.stringify(verified.body)}`);
  return verified.body.apiKey;
}
