/**
 * The DocService /v1 API as the CLI calls it: JSON and multipart requests with
 * the API key, and the JSON error body turned into an Error whose message is
 * what the server said (status, code, message and the fields at fault).
 */
export class PlatformClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
  ) {}

  async json<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const response = await this.request(path, {
      method,
      headers: { ...this.auth(), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  }

  /** POSTs one file as multipart/form-data (part `file`); resolves with the answer's bytes. */
  async upload(path: string, bytes: Buffer, filename: string): Promise<Buffer> {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(bytes)]), filename);
    const response = await this.request(path, { method: "POST", headers: this.auth(), body: form });
    return Buffer.from(await response.arrayBuffer());
  }

  private auth(): Record<string, string> {
    return this.apiKey ? { Authorization: `Bearer ${this.apiKey}` } : {};
  }

  private async request(path: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), init);
    } catch (error) {
      throw new Error(`cannot reach ${this.baseUrl}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
    }
    if (response.ok) return response;
    throw new Error(await describeFailure(response));
  }
}

async function describeFailure(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { code?: string; message?: string; details?: Array<{ field: string; issue: string }> };
    const details = body.details?.map((d) => `${d.field} ${d.issue}`).join("; ");
    return `${response.status} ${body.code ?? ""}: ${body.message ?? text}${details ? ` (${details})` : ""}`;
  } catch {
    return `${response.status}: ${text.slice(0, 200)}`;
  }
}
