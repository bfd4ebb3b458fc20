// A tiny browser stand-in over app.request(): keeps cookies, reads the CSRF token
// and links out of pages, and follows redirects when asked. Each client has its own
// client IP (TRUST_PROXY is on in these harnesses) so mail rate limits of one test
// never touch another's, even on a shared Postgres.
import type { Harness } from "../support/harness.ts";
import { listOutbox } from "../../src/mail/index.ts";

export interface Page {
  status: number;
  html: string;
  location: string | null;
  res: Response;
}

export function randomIp(): string {
  const b = crypto.getRandomValues(new Uint8Array(3));
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

export const uniqueEmail = (tag = "c") => `${tag}-${crypto.randomUUID()}@example.com`;

export function createClient(h: Harness, ip = randomIp()) {
  const jar = new Map<string, string>();
  let lastCsrf = "";

  function remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /max-age=0\b/i.test(a.trim())) || value === "";
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
  }

  async function request(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    const init: RequestInit = {
      method,
      headers: {
        "x-forwarded-for": ip,
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        ...headers,
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: "manual",
    };
    const res = await h.app.request(path, init);
    remember(res);
    const html = await res.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (m) lastCsrf = m[1];
    return { status: res.status, html, location: res.headers.get("location"), res };
  }

  async function follow(p: Page): Promise<Page> {
    let cur = p;
    for (let i = 0; i < 5 && cur.location && cur.status >= 300 && cur.status < 400; i++) cur = await request("GET", cur.location);
    return cur;
  }

  return {
    ip,
    jar,
    get: (path: string) => request("GET", path).then(follow),
    /** Posts with the CSRF token of the last page seen (unless the form sets _csrf). */
    post: (path: string, form: Record<string, string> = {}, headers?: Record<string, string>) =>
      request("POST", path, { _csrf: lastCsrf, ...form }, headers),
    postFollow: (path: string, form: Record<string, string> = {}) => request("POST", path, { _csrf: lastCsrf, ...form }).then(follow),
    raw: request,
    csrf: () => lastCsrf,
  };
}

export type Client = ReturnType<typeof createClient>;

/** The token of the newest one-time link mailed to `email`. */
export async function lastLinkToken(h: Harness, email: string): Promise<string | null> {
  await h.mailSent(); // written after the answer (src/console/mail-queue.ts)
  const [mail] = await listOutbox(h.services.db, { to: email, limit: 1 });
  const m = mail && /\/console\/auth\/link\?token=([A-Za-z0-9]+)/.exec(mail.text);
  return m ? m[1] : null;
}

/** Signs up a new address through the pages and opens the link: a signed-in client. */
export async function signedUp(h: Harness, email = uniqueEmail()) {
  const c = createClient(h);
  await c.get("/console/sign-up");
  const sent = await c.post("/console/sign-up", { email });
  if (sent.status !== 200) throw new Error(`sign-up answered ${sent.status}`);
  const token = await lastLinkToken(h, email);
  if (!token) throw new Error("no sign-up mail");
  await c.get(`/console/auth/link?token=${token}`);
  const done = await c.postFollow("/console/auth/link", { token });
  if (done.status !== 200) throw new Error(`link answered ${done.status}`);
  const user = await h.services.accounts.findUserByEmail(email);
  return { client: c, email, userId: user!.userId, orgId: user!.orgIds[0] };
}

/** Creates an app through the console; returns its ID and the test key shown once. */
export async function createAppVia(c: Client, name = "My app") {
  await c.get("/console/apps");
  const p = await c.post("/console/apps", { name });
  const key = /data-testid="key-text">([^<]+)</.exec(p.html)?.[1];
  const appId = /href="\/console\/apps\/(app_[A-Za-z0-9]+)"/.exec(p.html)?.[1];
  if (!key || !appId) throw new Error(`app not created: ${p.status}`);
  return { appId, testKey: key };
}

export const shownKey = (html: string) => /data-testid="key-text">([^<]+)</.exec(html)?.[1];
