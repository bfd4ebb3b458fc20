// The outbox mailer: messages are rows of mail_outbox instead of leaving the machine.
// Used when no SMTP server is configured; the developer mailbox page and the tests
// read the rows back with listOutbox.
import type { Db } from "../db/index.ts";
import type { Mailer, MailMessage } from "./mailer.ts";

export interface OutboxMail extends MailMessage {
  mailId: number;
  createdAt: number;
}

export function createOutboxMailer({ db, now }: { db: Db; now: () => number }): Mailer {
  return {
    kind: "outbox",
    async send(m) {
      await db.query("INSERT INTO mail_outbox (to_address, subject, body_text, created_at) VALUES ($1, $2, $3, $4)", [
        m.to,
        m.subject,
        m.text,
        new Date(now()),
      ]);
    },
  };
}

/** Newest first; `to` narrows to one address (any letter case). */
export async function listOutbox(db: Db, q: { to?: string; limit?: number } = {}): Promise<OutboxMail[]> {
  const limit = Math.max(1, Math.min(200, Math.floor(q.limit ?? 50)));
  const rows = await db.query<{ mail_id: number; to_address: string; subject: string; body_text: string; created_at: number }>(
    q.to
      ? `SELECT mail_id, to_address, subject, body_text, created_at FROM mail_outbox
          WHERE lower(to_address) = lower($1) ORDER BY mail_id DESC LIMIT ${limit}`
      : `SELECT mail_id, to_address, subject, body_text, created_at FROM mail_outbox ORDER BY mail_id DESC LIMIT ${limit}`,
    q.to ? [q.to] : [],
  );
  return rows.map((r) => ({ mailId: r.mail_id, to: r.to_address, subject: r.subject, text: r.body_text, createdAt: r.created_at }));
}
