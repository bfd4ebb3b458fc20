// Sign-up, sign-in, the mailed one-time link, sign-out (here or everywhere). The link's
// GET shows a button and the address it signs in as, and only the POST uses the link:
// mail scanners that fetch every URL in a message would otherwise burn it before the
// person clicks.
import type { Hono } from "hono";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { baseUrl, clientIp, errorPage, formOf, page, type Ctx } from "../http.tsx";
import { Csrf, Field, Notice } from "../pages/layout.tsx";
import { clearSessionCookie, sessionToken, setSessionCookie } from "../security.ts";

function EmailForm(p: { action: string; button: string; csrf: string; email?: string; error?: string }) {
  return (
    <form method="post" action={p.action} novalidate>
      <Csrf value={p.csrf} />
      <Field name="email" label="E-mail address" type="email" inputmode="email" autocomplete="email" required value={p.email} error={p.error} />
      <button type="submit">{p.button}</button>
    </form>
  );
}

const checkMail = (c: Ctx, what: string) =>
  page(
    c,
    "Check your e-mail",
    <>
      <Notice kind="ok">
        If the address can {what}, a link is on its way. It works once, for 30 minutes.
      </Notice>
      <p>No mail? Check the spam folder, or ask again in a minute.</p>
    </>,
  );

export function registerAuthRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps, st: ConsoleStores): void {
  const emailRoute = (
    path: string,
    title: string,
    intro: string,
    button: string,
    what: string,
    send: typeof st.flow.requestSignUp,
  ) => {
    app.get(path, (c) =>
      page(c, title, <><p>{intro}</p><EmailForm action={path} button={button} csrf={c.get("csrf")} /></>),
    );
    app.post(path, async (c) => {
      const email = (await formOf(c)).email ?? "";
      const r = await send(email, clientIp(d, c), baseUrl(d));
      if (r.ok) return checkMail(c, what);
      if (r.code === "rate_limited" || r.code === "service_unavailable") {
        if (r.retryAfter) c.header("Retry-After", String(r.retryAfter));
        return errorPage(c, r.code === "rate_limited" ? 429 : 503, "Too many e-mails", r.title ?? "Try again later.");
      }
      return page(c, title, <EmailForm action={path} button={button} csrf={c.get("csrf")} email={email} error={r.title} />, 400);
    });
  };

  emailRoute(
    "/console/sign-up",
    "Sign up",
    "Enter your e-mail address. We send a link; opening it creates your account and organization. No password needed.",
    "Send verification link",
    "be used to sign up",
    st.flow.requestSignUp,
  );
  emailRoute(
    "/console/sign-in",
    "Sign in",
    "Enter the address of your account. We send a one-time sign-in link.",
    "Send sign-in link",
    "sign in",
    st.flow.requestSignIn,
  );

  // The page names the account the link opens, and the one this browser is in now: a link
  // someone else asked for (their own account) and sent here would otherwise sign this
  // person into it with one press, where they might top it up.
  app.get("/console/auth/link", async (c) => {
    const token = c.req.query("token") ?? "";
    const link = await st.flow.linkFor(token);
    if (!link.ok) return errorPage(c, 404, "Link not valid", link.title ?? "This link has expired or was already used.");
    const session = c.get("session");
    const current = session ? (await d.accounts.getUser(session.userId))?.email : undefined;
    const other = current !== undefined && current.toLowerCase() !== link.email.toLowerCase();
    return page(
      c,
      "Continue to Pixeldrop",
      <form method="post" action="/console/auth/link">
        <Csrf value={c.get("csrf")} />
        <input type="hidden" name="token" value={token} />
        <p>
          This link signs you in as <strong data-testid="link-email">{link.email}</strong>
          {link.purpose === "signup" ? ", and makes its account and organization if it has none" : ""}. Continue only if that is your address.
        </p>
        {other ? <Notice kind="warn">This browser is signed in as {current}. Continuing signs it out of that account.</Notice> : null}
        <button type="submit">Continue</button>
      </form>,
    );
  });

  app.post("/console/auth/link", async (c) => {
    const r = await st.flow.completeLink((await formOf(c)).token ?? "");
    if (!r.ok) return errorPage(c, 404, "Link not valid", r.title ?? "This link has expired or was already used.");
    // A fresh session (and CSRF token) on every sign-in: no fixation of an old cookie.
    await st.sessions.destroy(sessionToken(d, c));
    const { token } = await st.sessions.create(r.userId, r.orgId);
    setSessionCookie(d, c, token);
    return c.redirect(r.created ? "/console/apps?welcome=1" : "/console/apps", 303);
  });

  app.post("/console/sign-out", async (c) => {
    await st.sessions.destroy(sessionToken(d, c));
    clearSessionCookie(d, c);
    return c.redirect("/", 303);
  });

  // Every session of this person ends: other browsers, other devices, a cookie someone
  // else may hold; and every sign-in link mailed to them that is still unused. Needs the
  // session and its CSRF token, like any signed-in form.
  app.post("/console/sign-out-everywhere", async (c) => {
    const userId = c.get("session")!.userId; // a session is required (app.tsx)
    await st.links.voidAllOf(userId);
    await st.sessions.destroyAllOf(userId);
    clearSessionCookie(d, c);
    return c.redirect("/", 303);
  });
}
