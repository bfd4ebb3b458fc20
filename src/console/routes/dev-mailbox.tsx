// The developer mailbox: the outbox mailer's messages, for trying sign-up without an
// SMTP server. Registered only in development on a loopback HOST, with the outbox mailer
// (src/wiring/app.ts), and answered only to a request that names a loopback host: a web
// page that rebinds its own name to 127.0.0.1 reaches the port, but not under that name.
import type { Hono } from "hono";
import { listOutbox } from "../../mail/index.ts";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { notFound, page } from "../http.tsx";
import { isLoopbackHost } from "../../http/loopback-host.ts";
import { Notice, when } from "../pages/layout.tsx";
import { Preformatted } from "../pages/scroll-region.tsx";

export function registerDevMailbox(app: Hono<ConsoleEnv>, d: ConsoleDeps, st: ConsoleStores): void {
  app.get("/console/dev/mailbox", async (c) => {
    if (!isLoopbackHost(new URL(c.req.url).hostname)) return notFound(c);
    const to = c.req.query("to")?.trim() || undefined;
    // Mail asked for a moment ago is written after its answer (mail-queue.ts): shown once written.
    await st.flow.mailSent();
    const mails = await listOutbox(d.db, { to, limit: 50 });
    return page(
      c,
      "Developer mailbox",
      <>
        <Notice kind="warn">Development only: mail that would have been sent. Not available in production.</Notice>
        <form method="get" action="/console/dev/mailbox" role="search">
          <div class="field"><label for="f-to">Recipient</label><input id="f-to" name="to" type="email" value={to ?? ""} /></div>
          <button type="submit">Filter</button>
        </form>
        {mails.length === 0 ? <p>No mail.</p> : mails.map((m) => (
          <article class="card" data-testid="mail">
            <h2>{m.subject}</h2>
            <p class="hint">To {m.to} · {when(m.createdAt)}</p>
            <Preformatted label={`Text of “${m.subject}”`} text={m.text} code={false} />
          </article>
        ))}
      </>,
    );
  });
}
