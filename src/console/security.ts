// The console's request guards: the form's limits, the session cookie, and CSRF.
//
// Order of a POST, cheapest refusal first and nothing read before it is bounded: the
// Origin header (another site: 403) → the form, read within FORM_LIMITS while it
// arrives (413 past either limit, before the session is looked up or the token
// compared) → the session → the CSRF token.
//
// CSRF: a signed-in session has its own token (synchronizer token); before sign-in
// the forms use a double-submit cookie. Every POST must send the token back as
// _csrf, and a POST whose Origin names another site is refused as well. The
// playground's script sends it in the X-CSRF-Token header instead, so its image body
// reaches the gateway unread (a page on another site cannot set that header either). SameSite=Lax
// cookies already keep most cross-site posts out; the token covers the rest.
//
// Cookies: over https (PUBLIC_URL, the request, or X-Forwarded-Proto from a trusted
// proxy) they are Secure and named with the __Host- prefix, which a browser accepts
// only from a secure origin, for Path=/ and no Domain: no subdomain or plain-http page
// can plant or overwrite them. Over plain http (local development) a Secure cookie would
// never come back, so they are plain, unprefixed and not Secure; an unprefixed cookie is
// never read over https (docs/DECISIONS.md, "Console cookies").
import type { MiddlewareHandler } from "hono";
import { getCookie, setCookie, deleteCookie } from "hono/cookie";
import { readFormCapped, type FormLimits } from "../http/read-form.ts";
import { peerIsTrustedProxy } from "../http/proxy-trust.ts";
import { constantTimeEqual } from "../keys/index.ts";
import type { ConsoleDeps, ConsoleStores } from "./deps.ts";
import type { ConsoleEnv } from "./env.ts";
import { errorPage, type Ctx } from "./http.tsx";
import { SESSION_ABSOLUTE_MS } from "./sessions.ts";
import { newSecretToken } from "./tokens.ts";

/** A console form: tens of bytes of fields, a handful of them. Anything past these is not one. */
export const FORM_LIMITS: FormLimits = { maxBytes: 32 * 1024, maxFields: 32 };

export const CSRF_HEADER = "x-csrf-token";
/** The one route whose body is not a form: the playground's image, passed to the gateway unread. */
const PASSED_BODY = /^\/console\/apps\/[^/]+\/playground$/;

const cookieNames = (secure: boolean) =>
  secure ? { session: "__Host-pd_session", csrf: "__Host-pd_csrf" } : { session: "pd_session", csrf: "pd_csrf" };

export function isSecure(d: ConsoleDeps, c: Ctx): boolean {
  if (d.publicUrl?.startsWith("https:")) return true;
  if (new URL(c.req.url).protocol === "https:") return true;
  return c.req.header("x-forwarded-proto") === "https" && peerIsTrustedProxy(d.trustProxy, d.remoteAddress(c.req.raw, c.env));
}

/** The session cookie's value as this request may send it (see the top of the file). */
export function sessionToken(d: ConsoleDeps, c: Ctx): string | undefined {
  return getCookie(c, cookieNames(isSecure(d, c)).session);
}

export function setSessionCookie(d: ConsoleDeps, c: Ctx, token: string): void {
  const secure = isSecure(d, c);
  setCookie(c, cookieNames(secure).session, token, {
    httpOnly: true,
    sameSite: "Lax",
    secure,
    path: "/",
    maxAge: Math.floor(SESSION_ABSOLUTE_MS / 1000),
  });
}

export function clearSessionCookie(d: ConsoleDeps, c: Ctx): void {
  const secure = isSecure(d, c);
  deleteCookie(c, cookieNames(secure).session, { path: "/", secure });
}

export function consoleGuards(d: ConsoleDeps, st: ConsoleStores): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    // Error pages before the session is known render as signed out.
    c.set("session", null);
    c.set("csrf", "");
    let form: Record<string, string> | undefined;
    const posting = c.req.method === "POST";
    if (posting) {
      const origin = c.req.header("origin");
      const allowed = new Set([new URL(c.req.url).origin, ...(d.publicUrl ? [new URL(d.publicUrl).origin] : [])]);
      if (origin && origin !== "null" && !allowed.has(origin)) {
        return errorPage(c, 403, "Request refused", "This form was sent from another site.");
      }
      if (!(c.req.header(CSRF_HEADER) !== undefined && PASSED_BODY.test(c.req.path))) {
        const read = await readFormCapped(c.req.raw, FORM_LIMITS);
        if (!read.ok) {
          if (read.refused === "unreadable") return errorPage(c, 400, "Form not readable", "The form could not be read. Reload the page and try again.");
          return errorPage(c, 413, "Form too large", `${read.title}: no form of this console is that large.`);
        }
        form = read.fields;
      }
    }
    c.set("form", form);

    const secure = isSecure(d, c);
    const names = cookieNames(secure);
    const session = await st.sessions.get(getCookie(c, names.session));
    c.set("session", session);
    let csrf = session?.csrf;
    if (!csrf) {
      csrf = getCookie(c, names.csrf);
      if (!csrf || csrf.length !== 32) {
        csrf = newSecretToken();
        setCookie(c, names.csrf, csrf, { httpOnly: true, sameSite: "Lax", secure, path: "/" });
      }
    }
    c.set("csrf", csrf);

    if (posting) {
      const sent = c.req.header(CSRF_HEADER) ?? form?._csrf ?? "";
      if (!constantTimeEqual(sent, csrf)) {
        return errorPage(c, 403, "Request refused", "The form had expired or did not come from this console. Reload the page and try again.");
      }
    }
    await next();
    // Pages hold CSRF tokens and account data: never kept by a cache. The headers every
    // answer carries (CSP, framing, nosniff, referrer, HSTS) are src/http/security-headers.ts's.
    c.header("Cache-Control", "no-store");
  };
}

/** For pages that need a signed-in user: others are sent to sign in. */
export const requireSession: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  if (!c.get("session")) return c.redirect("/console/sign-in", 303);
  await next();
};
