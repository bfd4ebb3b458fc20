// The customer console: server-rendered pages under /console and the landing page at
// "/". Built from the services passed in; its own stores (sessions, links, top-ups)
// are made here from the same database and clock.
import { Hono } from "hono";
import { buildStores, type ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./env.ts";
import { registerAppRoutes } from "./routes/apps.tsx";
import { registerAuthRoutes } from "./routes/auth.tsx";
import { registerCreditRoutes } from "./routes/credit.tsx";
import { registerDevMailbox } from "./routes/dev-mailbox.tsx";
import { registerDocsRoutes } from "./routes/docs.tsx";
import { registerKeyRoutes } from "./routes/keys.tsx";
import { registerLanding } from "./routes/landing.tsx";
import { registerLimitRoutes } from "./routes/limits.tsx";
import { registerPlaygroundRoutes } from "./routes/playground.tsx";
import { registerUsageRoutes } from "./routes/usage.tsx";
import { consoleGuards, requireSession } from "./security.ts";
import { COPY_JS, STYLE_CSS } from "./static.ts";
import { PLAYGROUND_JS } from "./playground-script.ts";
import { assetBytes, SHOWCASE } from "./assets.ts";

export type { ConsoleDeps } from "./deps.ts";

/** Pages anyone may open; every other console page needs a session. */
const PUBLIC_PATHS = new Set(["/", "/console/sign-up", "/console/sign-in", "/console/auth/link", "/console/docs", "/console/dev/mailbox"]);

export interface ConsoleApp {
  app: Hono<ConsoleEnv>;
  /** Resolves once the sign-up and sign-in mails asked for so far are written (mail-queue.ts). */
  mailSent(): Promise<void>;
}

export function createConsoleApp(d: ConsoleDeps): ConsoleApp {
  const st = buildStores(d);
  const app = new Hono<ConsoleEnv>();

  // Static files need neither session nor CSRF.
  app.get("/console/static/style.css", (c) => c.body(STYLE_CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=3600" }));
  app.get("/console/static/copy.js", (c) => c.body(COPY_JS, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" }));
  app.get("/console/static/playground.js", (c) => c.body(PLAYGROUND_JS, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" }));
  for (const a of Object.values(SHOWCASE)) {
    app.get(a.path, (c) => c.body(assetBytes(a) as Uint8Array<ArrayBuffer>, 200, { "content-type": a.type, "cache-control": "public, max-age=86400" }));
  }

  const guards = consoleGuards(d, st);
  app.use("/", guards);
  app.use("/console", guards);
  app.use("/console/*", guards);
  const gate: typeof requireSession = (c, next) => (PUBLIC_PATHS.has(c.req.path) ? next() : requireSession(c, next));
  app.use("/console", gate);
  app.use("/console/*", gate);

  registerLanding(app, d);
  registerAuthRoutes(app, d, st);
  registerDocsRoutes(app, d);
  if (d.devMailbox) registerDevMailbox(app, d, st);
  registerAppRoutes(app, d, st);
  registerKeyRoutes(app, d, st);
  registerCreditRoutes(app, d, st);
  registerLimitRoutes(app, d, st);
  registerUsageRoutes(app, d, st);
  registerPlaygroundRoutes(app, d);
  return { app, mailSent: st.flow.mailSent };
}
