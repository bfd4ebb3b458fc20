// Sign-up, sign-in and the one-time link that completes both. The same "check your
// mail" answer is given whether or not an address is registered, after the same steps
// (shape, rate limits, a queued job: mail-queue.ts), so neither the page nor its timing
// tells who has an account. The user and the organization they own are created
// together when the sign-up link is opened (the address is then proven).
import type { Accounts } from "../accounts/index.ts";
import { canonicalEmail, normaliseEmail } from "../accounts/validate.ts";
import { fail, type Failure } from "../http/api-error.ts";
import type { Mailer } from "../mail/index.ts";
import type { LoginLinks } from "./login-links.ts";
import { createMailQueue, type MailQueue } from "./mail-queue.ts";
import type { MailKind, MailRate } from "./mail-rate.ts";

export interface AccountFlowDeps {
  accounts: Pick<Accounts, "createOrgWithOwner" | "findUserByEmail" | "markEmailVerified">;
  links: LoginLinks;
  mailRate: MailRate;
  mailer: Mailer;
  log: (e: Record<string, unknown>) => void;
}

/** One asked-for mail: written by the queue after the answer. */
interface MailJob {
  kind: MailKind;
  email: string;
  baseUrl: string;
}

/** An address the console mails: the accounts' rule (normaliseEmail), with a dot inside its domain. */
export function checkEmail(raw: string): string | null {
  const e = normaliseEmail(raw);
  if (!e) return null;
  const c = canonicalEmail(e);
  return /^.+\..+$/.test(c.slice(c.lastIndexOf("@") + 1)) ? e : null;
}

export function createAccountFlow({ accounts, links, mailRate, mailer, log }: AccountFlowDeps) {
  /** The mail a request asked for, if the address gets one: the part whose steps depend on the account. */
  async function deliver({ kind, email, baseUrl }: MailJob): Promise<void> {
    const existing = await accounts.findUserByEmail(email);
    if (kind === "signin") {
      // Unknown addresses get no mail (nothing to sign in to).
      if (!existing || existing.orgIds.length === 0) return;
      const token = await links.issue("signin", existing.email);
      await mailer.send({
        to: existing.email,
        subject: "Sign in to Pixeldrop",
        text: `Sign in to the Pixeldrop console with this link (valid 30 minutes, once):\n${linkUrl(baseUrl, token)}\n\nIf you did not ask for it, ignore this mail.`,
      });
    } else if (existing) {
      // Already registered: a sign-in link instead of a second account.
      const token = await links.issue("signin", existing.email);
      await mailer.send({
        to: existing.email,
        subject: "Sign in to Pixeldrop",
        text: `Someone asked to sign up with this address, which already has a Pixeldrop account.\n\nSign in with this link (valid 30 minutes, once):\n${linkUrl(baseUrl, token)}\n\nIf it was not you, ignore this mail.`,
      });
    } else {
      const token = await links.issue("signup", email);
      await mailer.send({
        to: email,
        subject: "Verify your e-mail for Pixeldrop",
        text: `Welcome to Pixeldrop.\n\nOpen this link to verify your address and create your organization (valid 30 minutes, once):\n${linkUrl(baseUrl, token)}\n\nIf you did not sign up, ignore this mail.`,
      });
    }
  }

  // The address is never logged: the request ID of the asking request is in its access line.
  const queue: MailQueue<MailJob> = createMailQueue(deliver, (err) =>
    log({ level: "error", msg: "console mail failed", err: err instanceof Error ? err.message : String(err) }),
  );

  /** `baseUrl` is where the console is reached, e.g. https://pixeldrop.example. */
  async function request(kind: MailKind, rawEmail: string, ip: string, baseUrl: string): Promise<{ ok: true } | Failure> {
    const email = checkEmail(rawEmail);
    if (!email) return fail("invalid_parameter", "Enter an e-mail address such as name@example.com");
    const limited = await mailRate.take(kind, email, ip);
    if (!limited.ok) return limited;
    if (!queue.push({ kind, email, baseUrl })) return fail("service_unavailable", "Too many e-mails are waiting to be sent. Try again in a minute.", 60);
    return { ok: true };
  }

  const requestSignUp = (rawEmail: string, ip: string, baseUrl: string) => request("signup", rawEmail, ip, baseUrl);
  const requestSignIn = (rawEmail: string, ip: string, baseUrl: string) => request("signin", rawEmail, ip, baseUrl);

  /** Opens a mailed link: creates the account on sign-up, then names who to sign in. */
  async function completeLink(token: string): Promise<{ ok: true; userId: string; orgId: string; created: boolean } | Failure> {
    const link = await links.consume(token);
    if (!link.ok) return link;
    const existing = await accounts.findUserByEmail(link.email);
    if (existing && existing.orgIds.length > 0) {
      // A sign-in, or a sign-up link opened after the account was made another way.
      await accounts.markEmailVerified(existing.userId);
      return { ok: true, userId: existing.userId, orgId: existing.orgIds[0], created: false };
    }
    if (link.purpose !== "signup") return fail("not_found", "No account uses this address any more");
    const made = await accounts.createOrgWithOwner(link.email, { verified: true });
    if (!made.ok) return made;
    return { ok: true, userId: made.userId, orgId: made.orgId, created: true };
  }

  return { requestSignUp, requestSignIn, linkFor: links.peek, completeLink, mailSent: queue.idle };
}

export function linkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/console/auth/link?token=${encodeURIComponent(token)}`;
}

export type AccountFlow = ReturnType<typeof createAccountFlow>;
