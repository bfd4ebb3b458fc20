// SMTP delivery through nodemailer, loaded only when SMTP_URL is set so the embedded
// default (and Deno) never pulls it in.
import type { Mailer } from "./mailer.ts";

export async function createSmtpMailer(opts: { url: string; from: string }): Promise<Mailer> {
  const nodemailer = (await import("nodemailer")).default;
  const transport = nodemailer.createTransport(opts.url);
  return {
    kind: "smtp",
    async send(m) {
      await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text });
    },
  };
}
