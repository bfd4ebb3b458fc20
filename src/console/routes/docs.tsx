// The docs page: quick start (curl and TypeScript), the error table straight from the
// error catalogue (so it cannot drift), and the limits.
import type { Hono } from "hono";
import { ERRORS, type ErrorCode } from "../../http/error-catalogue.ts";
import type { ConsoleDeps } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { baseUrl, page } from "../http.tsx";
import { ORG_DAILY_LIMIT_MAX_KRW, wonRange } from "../../accounts/index.ts";
import { Preformatted, ScrollRegion } from "../pages/scroll-region.tsx";
import { EXTRA_HEADERS, EXTRA_PARTS } from "./docs-extras.ts";

// The codes a customer can meet on /v1.0/removebg (operator-only codes are left out).
const PUBLIC_CODES: ErrorCode[] = [
  "invalid_parameter", "unsupported_parameter", "invalid_api_key", "insufficient_credits", "key_suspended",
  "product_not_enabled", "refund_pending", "product_discontinued", "file_too_large", "rate_limited",
  "daily_limit_reached", "monthly_limit_reached", "test_quota_exceeded", "upstream_error", "service_unavailable",
  "gateway_busy", "upstream_timeout", "deadline_unreachable", "key_queue_full", "inference_failed",
  "idempotency_key_in_use", "idempotency_key_reused",
];

const TS_CLIENT = (base: string) => `// Node 20+ or Deno; keep the key in an environment variable.
import { readFile, writeFile } from "node:fs/promises";

const form = new FormData();
form.append("image_file", new Blob([await readFile("photo.jpg")]), "photo.jpg");
form.append("size", "preview"); // 22 KRW; "full" or omitted: 110 KRW

const res = await fetch("${base}/v1.0/removebg", {
  method: "POST",
  headers: { "X-Api-Key": process.env.PIXELDROP_KEY! },
  body: form,
  signal: AbortSignal.timeout(150_000), // at least 150 s
});
const requestId = res.headers.get("X-PD-Request-Id"); // quote it to support
if (!res.ok) {
  const { errors } = await res.json();
  throw new Error(\`\${res.status} \${errors[0].code} (\${requestId})\`);
}
await writeFile("photo.png", new Uint8Array(await res.arrayBuffer()));`;

export function registerDocsRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps): void {
  app.get("/console/docs", (c) => {
    const base = baseUrl(d);
    return page(
      c,
      "Docs",
      <>
        <nav aria-label="On this page">
          <ul><li><a href="#quick-start">Quick start</a></li><li><a href="#beyond">Options and headers beyond the spec</a></li><li><a href="#errors">Errors</a></li><li><a href="#limits">Limits</a></li></ul>
        </nav>
        <h2 id="quick-start">Quick start</h2>
        <ol>
          <li><a href="/console/sign-up">Sign up</a> and open the link we e-mail you.</li>
          <li>Create an app: you get its test key (free, 50 calls a month, preview size).</li>
          <li>Apply for use; once an operator enables the product, top up credit and issue the live key.</li>
        </ol>
        <h3>curl</h3>
        <Preformatted label="Quick start: curl" text={`curl -sS -X POST ${base}/v1.0/removebg \\
  -H "X-Api-Key: $PIXELDROP_KEY" \\
  -F image_file=@photo.jpg -F size=preview \\
  --max-time 150 -D headers.txt -o photo.png`} />
        <h3>TypeScript</h3>
        <Preformatted label="Quick start: TypeScript" text={TS_CLIENT(base)} />
        <p>
          Successful paid calls carry <code>X-PD-Charged-KRW</code> and <code>X-PD-Balance-KRW</code>; test-key calls carry{" "}
          <code>X-PD-Test-Remaining</code>. Every response carries <code>X-PD-Request-Id</code>. On 503 and on 429 honour{" "}
          <code>Retry-After</code>; for other errors do not retry.
        </p>
        <p>
          To retry a call whose answer was lost without paying twice, send an <code>Idempotency-Key</code> header (1–255 printable
          ASCII characters, e.g. a UUID) and send the same key with the same image and parameters again: within 24 hours a call that
          succeeded is answered again with <code>X-PD-Charged-KRW: 0</code> and <code>Idempotent-Replayed: true</code>. The key
          with a different request is 422 <code>idempotency_key_reused</code>; while the first call runs, 409{" "}
          <code>idempotency_key_in_use</code> with <code>Retry-After</code>. A call that ended in an error keeps nothing. The
          TypeScript client sends a key on every call.
        </p>
        <h2 id="beyond">Options and headers beyond the spec</h2>
        <p>Optional form parts (bad values: 400 <code>invalid_parameter</code> naming the part; same price tiers):</p>
        <ScrollRegion label="Optional form parts">
          <table>
            <thead><tr><th scope="col">Part</th><th scope="col">What it does</th></tr></thead>
            <tbody>{EXTRA_PARTS.map((p) => <tr><td><code>{p.name}</code></td><td>{p.description}</td></tr>)}</tbody>
          </table>
        </ScrollRegion>
        <p>Response headers:</p>
        <ScrollRegion label="Response headers">
          <table>
            <thead><tr><th scope="col">Header</th><th scope="col">Meaning</th></tr></thead>
            <tbody>{EXTRA_HEADERS.map((h) => <tr><td><code>{h.name}</code></td><td>{h.description}</td></tr>)}</tbody>
          </table>
        </ScrollRegion>
        <h2 id="errors">Errors</h2>
        <p>Body: <code>{`{"errors":[{"title":"…","code":"…"}]}`}</code>. No error is charged.</p>
        <ScrollRegion label="Errors">
          <table>
            <thead><tr><th scope="col">HTTP</th><th scope="col">code</th><th scope="col">Meaning</th></tr></thead>
            <tbody>{PUBLIC_CODES.map((code) => <tr><td>{ERRORS[code].status}</td><td><code>{code}</code></td><td>{ERRORS[code].title}</td></tr>)}</tbody>
          </table>
        </ScrollRegion>
        <h2 id="limits">Limits</h2>
        <ScrollRegion label="Limits">
          <table>
            <thead><tr><th scope="col">Scope</th><th scope="col">Default</th><th scope="col">When reached</th></tr></thead>
            <tbody>
              <tr><td>Request body</td><td>12,000,000 bytes</td><td>413 file_too_large</td></tr>
              <tr><td>Input image</td><td>12 megapixels</td><td>400 invalid_parameter</td></tr>
              <tr><td>Organization daily spending</td><td>50,000 KRW ({wonRange(ORG_DAILY_LIMIT_MAX_KRW)}, set in Limits)</td><td>429 daily_limit_reached until 00:00 KST</td></tr>
              <tr><td>App daily / monthly spending</td><td>none (optional)</td><td>429 daily_limit_reached / monthly_limit_reached</td></tr>
              <tr><td>Live calls at once</td><td>2 per organization</td><td>429 rate_limited</td></tr>
              <tr><td>Test key</td><td>50 a month, 10 a minute, 1 at once</td><td>429 test_quota_exceeded</td></tr>
              <tr><td>Deadline</td><td>140 s from receipt, resends included</td><td>504 upstream_timeout</td></tr>
            </tbody>
          </table>
        </ScrollRegion>
      </>,
    );
  });
}
