// The headers every answer carries, whatever route made it (API, console, static files,
// /docs/api, /openapi.json, /metrics, health, errors and 404s), set in one place:
// - X-Content-Type-Options: nosniff: a browser takes the Content-Type as sent;
// - X-Frame-Options: DENY and CSP frame-ancestors 'none': no page of ours in a frame
//   (clickjacking);
// - Referrer-Policy: no-referrer: console links carry one-time tokens;
// - Content-Security-Policy: an HTML page may load only our own scripts, styles and
//   images (PAGE_CSP; a route may send its own, e.g. /docs/api with its inline style's
//   hash); anything else may load nothing (NONE_CSP), so a JSON or image answer opened
//   in a browser runs nothing;
// - Strict-Transport-Security when PUBLIC_URL is https: browsers then refuse plain http
//   to this host for a year. Not includeSubDomains or preload: the operator's other
//   hosts are not ours to decide.
// Values are built once; each answer costs a few header writes. A route may put them in
// its answers itself (c.get("answerHeaders"): the public API does, so a flood of its
// refusals costs no header object per answer); an error answer whose own headers already
// carry every one of them is left as it is.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";
import { headerRecordOf } from "./error-response.ts";

/** img-src blob: lets the playground show the chosen image and its cut-out from object URLs. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** For every answer that is not an HTML page. */
export const NONE_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** A page whose only style is inline, allowed by its hash (an attribute- or script-free page). */
export function inlineStyleCsp(sha256Base64: string): string {
  return PAGE_CSP.replace("style-src 'self'", `style-src 'sha256-${sha256Base64}'`);
}

export const HSTS = "max-age=31536000";

export function securityHeaders(o: { https: boolean }): MiddlewareHandler<AppEnv> {
  const always: [string, string][] = [
    ["x-content-type-options", "nosniff"],
    ["x-frame-options", "DENY"],
    ["referrer-policy", "no-referrer"],
    ...(o.https ? ([["strict-transport-security", HSTS]] as [string, string][]) : []),
  ];
  /** What a non-page answer carries, for routes that set it themselves. */
  const answerHeaders: Readonly<Record<string, string>> = Object.freeze(Object.fromEntries([...always, ["content-security-policy", NONE_CSP]]));
  const stamp = (h: Headers) => {
    for (const [k, v] of always) h.set(k, v);
    if (!h.has("content-security-policy")) h.set("content-security-policy", /^text\/html\b/i.test(h.get("content-type") ?? "") ? PAGE_CSP : NONE_CSP);
  };
  /** An error answer made with them (its headers as made: nothing removes them later). */
  const carried = (res: Response) => {
    const made = headerRecordOf(res);
    if (made === undefined) return false;
    for (const k in answerHeaders) if (made[k] !== answerHeaders[k]) return false;
    return true;
  };
  return async (c, next) => {
    c.set("answerHeaders", answerHeaders);
    await next();
    if (carried(c.res)) return;
    try {
      stamp(c.res.headers);
    } catch {
      // Responses from elsewhere (fetch) can have immutable headers; copy before stamping.
      c.res = new Response(c.res.body, c.res);
      stamp(c.res.headers);
    }
  };
}
