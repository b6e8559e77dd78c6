import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import nodemailer, { type Transporter } from "nodemailer";
import type { Logger } from "../../core/logger.js";
import type { Mailer, MailMessage } from "./mailer.js";

/** Embedded mode: each mail becomes an .eml file in the outbox directory, and its path is logged. */
export class OutboxMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(
    readonly directory: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    mkdirSync(directory, { recursive: true });
    this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  }

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, ...message });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const path = join(this.directory, `${stamp}-${randomUUID().slice(0, 8)}.eml`);
    await writeFile(path, info.message as Buffer);
    this.logger.info({ path, to: message.to }, "e-mail written to the outbox");
  }

  async close(): Promise<void> {}
}
