import { adjust, convert, gotenberg, office, please, ping, pipe, set, type RequestFields } from "gotenberg-js-client";
import { ServiceError, validationError } from "../core/errors.js";
import { PDF, type ConvertTarget } from "./convert-target.js";
import type { Converter, ConverterLoad } from "./converter.js";
import type { FormatSpec } from "./source-format.js";

export interface GotenbergSettings {
  /** Base URL of a Gotenberg 8 server, e.g. http://gotenberg:3000. */
  url: string;
  timeoutMs: number;
}

const HEALTH_TIMEOUT_MS = 2000;

/**
 * The production backend: Gotenberg 8's LibreOffice route through
 * gotenberg-js-client. The client (0.7.4) builds Gotenberg 6 URLs
 * (/convert/office, /ping), so each request's URL is adjusted to the v8 route;
 * it names each multipart part after its file, which Gotenberg 8 accepts.
 */
export class GotenbergConverter implements Converter {
  private readonly base: string;
  private converting = 0;

  constructor(private readonly settings: GotenbergSettings) {
    this.base = settings.url.replace(/\/+$/, "");
  }

  async convert(document: Buffer, format: FormatSpec, target: ConvertTarget = PDF): Promise<Buffer> {
    if (target.to !== "pdf") {
      throw validationError([{ field: "to", issue: "Gotenberg converts to PDF only; DOCX output needs the local LibreOffice backend (CONVERSION_BACKEND=local)" }]);
    }
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    const request = pipe(
      gotenberg(this.base, { signal }),
      convert,
      office,
      set(gotenbergFields(target)),
      adjust({ url: `${this.base}/forms/libreoffice/convert` }),
      please,
    );
    this.converting++;
    try {
      // Gotenberg picks LibreOffice's import filter from the file extension.
      const pdf = await request([`document.${format.name}`, document]);
      return await readAll(pdf);
    } catch (error) {
      throw this.mapError(error, signal);
    } finally {
      this.converting--;
    }
  }

  load(): ConverterLoad {
    return { waiting: 0, converting: this.converting };
  }

  async health(): Promise<void> {
    await pipe(gotenberg(this.base, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) }), ping, adjust({ url: `${this.base}/health` }), please)(null as never);
  }

  async close(): Promise<void> {}

  /** Gotenberg 400 → the document's fault (422); 503 or no answer → 503; our timeout → 504. */
  private mapError(error: unknown, signal: AbortSignal): ServiceError {
    if (signal.aborted) {
      return new ServiceError("TIMEOUT", `Gotenberg did not finish the conversion within ${this.settings.timeoutMs / 1000} s.`, { cause: error });
    }
    const status = Number(/^(\d{3}) /.exec((error as Error).message)?.[1]);
    if (status === 400 || status === 422) {
      return new ServiceError("UNPROCESSABLE_DOCUMENT", "Gotenberg could not convert the document: it is damaged or not in the declared format.", { cause: error });
    }
    if (status === 504) return new ServiceError("TIMEOUT", "Gotenberg timed out converting the document.", { cause: error });
    return new ServiceError("UNAVAILABLE", "The conversion backend (Gotenberg) is unavailable; try again shortly.", { retryAfterSeconds: 5, cause: error });
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(parts);
}

/** Gotenberg 8's form fields for PDF/A and PDF/UA (fields gotenberg-js-client, written for Gotenberg 6, does not type). */
function gotenbergFields(target: Extract<ConvertTarget, { to: "pdf" }>): Partial<RequestFields> {
  const fields: Record<string, string> = {};
  if (target.pdfa) fields.pdfa = `PDF/A-${target.pdfa}`;
  if (target.pdfua) fields.pdfua = "true";
  return fields as Partial<RequestFields>;
}
