export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends e-mail. SMTP in production, .eml files in the outbox in embedded mode. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
