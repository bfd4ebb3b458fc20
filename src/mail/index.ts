// Public surface of the mail module.
import type { Db } from "../db/index.ts";
import type { Mailer } from "./mailer.ts";
import { createOutboxMailer } from "./outbox.ts";
import { createSmtpMailer } from "./smtp.ts";

export type { Mailer, MailMessage } from "./mailer.ts";
export { createOutboxMailer, listOutbox, type OutboxMail } from "./outbox.ts";
export { createSmtpMailer } from "./smtp.ts";

/** SMTP when a server is configured, else the outbox table. */
export function createMailer(opts: { smtpUrl?: string; from: string; db: Db; now: () => number }): Promise<Mailer> {
  return opts.smtpUrl
    ? createSmtpMailer({ url: opts.smtpUrl, from: opts.from })
    : Promise.resolve(createOutboxMailer({ db: opts.db, now: opts.now }));
}
