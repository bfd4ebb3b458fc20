// Small helpers shared by the console's route files: rendering a page, reading a
// form, the ownership check every object route goes through.
import { clientAddress } from "../http/client-address.ts";
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { AppView } from "../accounts/index.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./env.ts";
import { Layout, Notice } from "./pages/layout.tsx";

export type Ctx = Context<ConsoleEnv>;

export function page(c: Ctx, title: string, body: Child, status: 200 | 400 | 403 | 404 | 409 | 429 | 503 = 200) {
  return c.html(
    <Layout title={title} signedIn={c.get("session") !== null} csrf={c.get("csrf")}>
      {body}
    </Layout>,
    status,
  );
}

export function errorPage(c: Ctx, status: 400 | 403 | 404 | 409 | 429 | 503, title: string, message: string) {
  return page(
    c,
    title,
    <>
      <Notice kind="error">{message}</Notice>
      <p><a href={c.get("session") ? "/console" : "/"}>Back to the start</a></p>
    </>,
    status,
  );
}

export const notFound = (c: Ctx) => errorPage(c, 404, "Not found", "There is nothing here, or it belongs to another organization.");

/** The posted form as strings (files are ignored: no console form uploads). */
export async function formOf(c: Ctx): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === "string") out[k] = v;
  return out;
}

/** The app, if it exists, is not deleted and belongs to the signed-in organization. */
export async function ownApp(d: ConsoleDeps, c: Ctx, appId: string): Promise<AppView | null> {
  const app = await d.accounts.getApp(appId);
  const s = c.get("session");
  if (!app || !s || app.orgId !== s.orgId || app.deletedAt !== null) return null;
  return app;
}

/**
 * Where the console is reached, in every link and page (mailed links, the examples):
 * PUBLIC_URL, never the request's Host or X-Forwarded-* (a forged one would put a
 * working sign-in link to another site into a victim's mailbox).
 */
export function baseUrl(d: ConsoleDeps): string {
  return d.publicUrl;
}

export function clientIp(d: ConsoleDeps, c: Ctx): string {
  return clientAddress(c.req.header("x-forwarded-for"), d.trustProxy, d.remoteAddress(c.req.raw, c.env));
}

/** A whole number of won from a form field: blank is null, anything else not a number is NaN. */
export function wonField(v: string | undefined): number | null {
  const t = (v ?? "").replace(/[,\s_]/g, "");
  if (t === "") return null;
  return /^\d{1,12}$/.test(t) ? Number(t) : Number.NaN;
}
