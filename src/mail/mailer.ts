// What the console needs from e-mail: send one plain-text message. Two
// implementations: SMTP (nodemailer) when SMTP_URL is set, else the outbox table.
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  readonly kind: "smtp" | "outbox";
  send(m: MailMessage): Promise<void>;
}
