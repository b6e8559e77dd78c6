import { z } from "zod";
import { type ConfigOf, boolean, optionalText, port, positiveInt, rate, secret, variable } from "../core/config.js";

/** API keys by e-mail: the store, the mail, the codes and the rate limits. docs/configuration.md's reference lists each one (a test checks). */
export const KEYS_VARIABLES = {
  keysServiceAddress: variable("KEYS_SERVICE_ADDR", optionalText, undefined, "host:port of KeyService for a gateway started alone (unset there: its routes answer 503)."),
  smtpHost: variable("SMTP_HOST", optionalText, undefined, "SMTP server for e-mail; unset means .eml files in the outbox/ folder of the data directory."),
  smtpPort: variable("SMTP_PORT", port, "587", "SMTP port."),
  smtpSecure: variable("SMTP_SECURE", boolean, "false", "Use implicit TLS (port 465); otherwise STARTTLS is used when offered."),
  smtpUser: variable("SMTP_USER", optionalText, undefined, "SMTP user name, if the server needs authentication."),
  smtpPassword: secret("SMTP_PASSWORD", optionalText, "SMTP password."),
  mailFrom: variable("MAIL_FROM", z.string().min(3), "DocService <no-reply@docservice.local>", "Sender of the verification e-mails."),
  codeTtlSeconds: variable("KEYS_CODE_TTL_SECONDS", positiveInt, "900", "Lifetime of a one-time code."),
  codeMaxAttempts: variable("KEYS_CODE_MAX_ATTEMPTS", positiveInt, "5", "Wrong attempts after which a code dies."),
  codePepper: secret("KEYS_CODE_PEPPER", z.string().min(16).optional(), "Secret mixed into code hashes; shared by all KeyService replicas. Unset: generated once in the data directory."),
  authCacheTtlMs: variable("KEYS_AUTH_CACHE_TTL_MS", z.coerce.number().int().min(0), "10000", "How long a successful authentication is cached in-process; a revoked key stops working within it."),
  registerRatePerEmail: variable("RATE_LIMIT_REGISTER_PER_EMAIL", rate, "5/3600", "Register calls allowed per address, as N/SECONDS."),
  registerRatePerIp: variable("RATE_LIMIT_REGISTER_PER_IP", rate, "20/3600", "Register calls allowed per client address."),
  verifyRatePerEmail: variable("RATE_LIMIT_VERIFY_PER_EMAIL", rate, "10/900", "Verify calls allowed per address."),
  verifyRatePerIp: variable("RATE_LIMIT_VERIFY_PER_IP", rate, "30/900", "Verify calls allowed per client address."),
};

export type KeysConfig = ConfigOf<typeof KEYS_VARIABLES>;
