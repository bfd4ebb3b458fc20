// Sign-up, sign-in and the one-time link that completes both. The same "check your
// mail" answer is given whether or not an address is registered, so the forms do not
// reveal who has an account. The user and the organization they own are created
// together when the sign-up link is opened (the address is then proven).
import type { Accounts } from "../accounts/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import type { Mailer } from "../mail/index.ts";
import type { LoginLinks } from "./login-links.ts";
import type { MailRate } from "./mail-rate.ts";

export interface AccountFlowDeps {
  accounts: Pick<Accounts, "createOrgWithOwner" | "findUserByEmail" | "markEmailVerified">;
  links: LoginLinks;
  mailRate: MailRate;
  mailer: Mailer;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkEmail(raw: string): string | null {
  const e = raw.trim();
  return e.length <= 254 && EMAIL.test(e) ? e : null;
}

export function createAccountFlow({ accounts, links, mailRate, mailer }: AccountFlowDeps) {
  /** `baseUrl` is where the console is reached, e.g. https://pixeldrop.example. */
  async function requestSignUp(rawEmail: string, ip: string, baseUrl: string): Promise<{ ok: true } | Failure> {
    const email = checkEmail(rawEmail);
    if (!email) return fail("invalid_parameter", "Enter an e-mail address such as name@example.com");
    const limited = await mailRate.take(email, ip);
    if (!limited.ok) return limited;
    const existing = await accounts.findUserByEmail(email);
    if (existing) {
      // Already registered: a sign-in link instead of a second account.
      const token = await links.issue("signin", existing.email);
      await mailer.send({
        to: existing.email,
        subject: "Sign in to Pixeldrop",
        text: `Someone asked to sign up with this address, which already has a Pixeldrop account.\n\nSign in with this link (valid 30 minutes, once):\n${linkUrl(baseUrl, token)}\n\nIf it was not you, ignore this mail.`,
      });
      return { ok: true };
    }
    const token = await links.issue("signup", email);
    await mailer.send({
      to: email,
      subject: "Verify your e-mail for Pixeldrop",
      text: `Welcome to Pixeldrop.\n\nOpen this link to verify your address and create your organization (valid 30 minutes, once):\n${linkUrl(baseUrl, token)}\n\nIf you did not sign up, ignore this mail.`,
    });
    return { ok: true };
  }

  async function requestSignIn(rawEmail: string, ip: string, baseUrl: string): Promise<{ ok: true } | Failure> {
    const email = checkEmail(rawEmail);
    if (!email) return fail("invalid_parameter", "Enter an e-mail address such as name@example.com");
    const limited = await mailRate.take(email, ip);
    if (!limited.ok) return limited;
    const user = await accounts.findUserByEmail(email);
    // Unknown addresses get no mail (nothing to sign in to) but the same answer.
    if (!user || user.orgIds.length === 0) return { ok: true };
    const token = await links.issue("signin", user.email);
    await mailer.send({
      to: user.email,
      subject: "Sign in to Pixeldrop",
      text: `Sign in to the Pixeldrop console with this link (valid 30 minutes, once):\n${linkUrl(baseUrl, token)}\n\nIf you did not ask for it, ignore this mail.`,
    });
    return { ok: true };
  }

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

  return { requestSignUp, requestSignIn, completeLink };
}

export function linkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/console/auth/link?token=${encodeURIComponent(token)}`;
}

export type AccountFlow = ReturnType<typeof createAccountFlow>;
