import { join } from "node:path";
import { cacheBin } from "./cache.js";
import { startDaemon } from "./daemon.js";
import { freePort } from "./ports.js";
import { canConnect, waitFor } from "./wait.js";

export interface MailMessage {
  id: string;
  subject: string;
  text: string;
  from: string;
  to: string[];
}

export interface Mailpit {
  smtpPort: number;
  /** Base of the HTTP API, e.g. http://127.0.0.1:PORT/api/v1 */
  apiUrl: string;
  stop(): Promise<void>;
  /**
   * Newest message with `address` in To (exact, case-insensitive), received at
   * or after `after`; polls until one arrives or `timeoutMs` (default 30 s) passes.
   */
  latestMessageTo(address: string, opts?: { timeoutMs?: number; after?: Date }): Promise<MailMessage>;
  deleteAll(): Promise<void>;
  countTo(address: string): Promise<number>;
}

// The parts of Mailpit's API responses used here.
interface Address {
  Name: string;
  Address: string;
}
interface Summary {
  ID: string;
  To: Address[] | null;
  Created: string;
}
interface Message {
  ID: string;
  From: Address | null;
  To: Address[] | null;
  Subject: string;
  Text: string;
}

/** Starts a throwaway Mailpit (built by scripts/testenv/setup.sh) with a temp database. */
export async function startMailpit(): Promise<Mailpit> {
  const bin = cacheBin("mailpit");
  const smtpPort = await freePort();
  const httpPort = await freePort();
  const apiUrl = `http://127.0.0.1:${httpPort}/api/v1`;

  const daemon = await startDaemon({
    name: `mailpit-${smtpPort}`,
    command: bin,
    args: (dir) => [
      "--smtp", `127.0.0.1:${smtpPort}`,
      "--listen", `127.0.0.1:${httpPort}`,
      "--database", join(dir, "mailpit.db"),
      "--disable-version-check",
      "--smtp-auth-accept-any",
      "--smtp-auth-allow-insecure",
      "--smtp-disable-rdns", // no DNS lookups of the client address
      "--max", "0", // never prune: countTo must see every message
      "--quiet",
    ],
    ready: async () =>
      (await fetch(`http://127.0.0.1:${httpPort}/readyz`)).ok && (await canConnect(smtpPort)),
  });

  async function api<T>(path: string, init?: RequestInit): Promise<T> {
    const res = await fetch(`${apiUrl}${path}`, init);
    const body = await res.text();
    if (!res.ok) throw new Error(`Mailpit ${init?.method ?? "GET"} ${path}: HTTP ${res.status} ${body}`);
    return (res.headers.get("content-type")?.includes("json") ? JSON.parse(body) : body) as T;
  }

  // Mailpit's to: search is a substring match, so the exact match is done here. Newest first.
  async function summariesTo(address: string): Promise<Summary[]> {
    const query = new URLSearchParams({ query: `to:"${address}"`, limit: "10000" });
    const { messages } = await api<{ messages: Summary[] }>(`/search?${query}`);
    const wanted = address.toLowerCase();
    return messages.filter((m) => (m.To ?? []).some((a) => a.Address.toLowerCase() === wanted));
  }

  return {
    smtpPort,
    apiUrl,
    stop: () => daemon.stop(),

    async latestMessageTo(address, { timeoutMs = 30_000, after } = {}) {
      let found: Summary | undefined;
      await waitFor(
        async () => {
          found = (await summariesTo(address)).find((m) => !after || new Date(m.Created) >= after);
          return found !== undefined;
        },
        {
          timeoutMs,
          intervalMs: 100,
          what: `a mail to ${address}${after ? ` received after ${after.toISOString()}` : ""} in Mailpit`,
        },
      );
      const m = await api<Message>(`/message/${found!.ID}`);
      return {
        id: m.ID,
        subject: m.Subject,
        text: m.Text,
        from: m.From?.Address ?? "",
        to: (m.To ?? []).map((a) => a.Address),
      };
    },

    async deleteAll() {
      await api("/messages", { method: "DELETE" });
    },

    async countTo(address) {
      return (await summariesTo(address)).length;
    },
  };
}
