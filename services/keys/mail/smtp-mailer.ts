import nodemailer, { type Transporter } from "nodemailer";
import { ServiceError } from "../../core/errors.js";
import type { Mailer, MailMessage } from "./mailer.js";

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string | undefined;
  password: string | undefined;
  from: string;
}

export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(private readonly settings: SmtpSettings) {
    this.transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      auth: settings.user ? { user: settings.user, pass: settings.password } : undefined,
      pool: true,
      connectionTimeout: 5000,
      greetingTimeout: 5000,
      socketTimeout: 10000,
    });
  }

  async send(message: MailMessage): Promise<void> {
    try {
      await this.transport.sendMail({ from: this.settings.from, ...message });
    } catch (error) {
      throw new ServiceError("UNAVAILABLE", "E-mail could not be sent; try again shortly.", {
        retryAfterSeconds: 5,
        cause: error,
      });
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
