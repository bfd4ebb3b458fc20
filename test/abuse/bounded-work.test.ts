// Bounded work before authentication (docs/SECURITY.md): what a caller without a session
// or a key can make the service read and parse. A console POST is read within
// FORM_LIMITS (32 KiB, 32 fields) while it arrives, before the session is looked up or
// the CSRF token compared: a 200 MB chunked upload and a body of two million fields are
// refused after their first bytes, and the rest is never read. A multipart form is
// parsed up to MAX_FORM_PARTS parts: 216,363 tiny parts are refused at the 17th.
// "Never read" is shown by counting what the server pulled from the body, not by time.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Db } from "../../src/db/index.ts";
import { MAX_FORM_PARTS } from "../../src/http/multipart.ts";
import { DRAIN_MAX_BYTES } from "../../src/http/unread-body.ts";
import { FORM_LIMITS } from "../../src/console/security.ts";
import { serve } from "../../src/wiring/serve.ts";
import { chunkedUpload } from "../support/chunked-upload.ts";
import { countedBody } from "../support/counted-body.ts";
import { makeHarness, type Harness } from "../support/harness.ts";
import { createClient } from "../console/client.ts";

let h: Harness;
/** Statements sent through the services' shared Db object while `counting` is on. */
let statements: string[] = [];
let counting = false;

function countStatements(db: Db): void {
  const query = db.query.bind(db);
  db.query = ((text: string, params?: unknown[]) => {
    if (counting) statements.push(text);
    return query(text, params);
  }) as Db["query"];
}

before(async () => {
  h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  countStatements(h.services.db);
});
after(() => h?.close());

const post = (path: string, body: BodyInit, headers: Record<string, string>) =>
  h.app.request(path, { method: "POST", body, headers: { "x-forwarded-for": "198.51.100.77", ...headers }, duplex: "half" } as RequestInit);

/** The answer to a POST, and the statements the service ran for it. */
async function refusedWithoutWork(path: string, body: BodyInit, headers: Record<string, string>) {
  statements = [];
  counting = true;
  const res = await post(path, body, headers);
  const html = await res.text();
  counting = false;
  return { res, html, statements: [...statements] };
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };

test("a chunked console POST is refused 413 once it passes 32 KiB, before the session or CSRF check; the rest is never read", async () => {
  // The 200 MB upload that took the process from 472 MB to 1.35 GB: one field, no token.
  const { stream, state } = countedBody(200_000_000);
  const r = await refusedWithoutWork("/console/sign-in", stream, FORM);
  assert.equal(r.res.status, 413, "refused for its size, not for its missing CSRF token (403)");
  assert.match(r.html, /larger than 32,768 bytes/);
  assert.ok(state.pulled > FORM_LIMITS.maxBytes, `the limit was reached (${state.pulled})`);
  assert.ok(state.pulled <= FORM_LIMITS.maxBytes + 64 * 1024, `reading stopped at the limit: pulled ${state.pulled} of 200,000,000`);
  assert.equal(state.cancelled, true, "the rest of the body was cancelled, not buffered");
  assert.deepEqual(r.statements, [], "no session lookup, no query of any kind");
});

test("a console POST announcing more than 32 KiB is refused before a byte is read", async () => {
  const { stream, state } = countedBody(200_000_000);
  const r = await refusedWithoutWork("/console/apps", stream, { ...FORM, "content-length": "200000000" });
  assert.equal(r.res.status, 413);
  assert.equal(state.pulled, 0);
  assert.deepEqual(r.statements, []);
});

test("two million fields: refused at the 33rd, as the first chunk arrives, before any of them is decoded", async () => {
  // "a&" × 2,000,000 = 4 MB, the body that froze the event loop for 2.2 s.
  const pair = new TextEncoder().encode("a&".repeat(8 * 1024)); // 16 KiB, 8,192 fields a chunk
  const { stream, state } = countedBody(4_000_000, pair);
  const r = await refusedWithoutWork("/console/sign-up", stream, FORM);
  assert.equal(r.res.status, 413);
  assert.match(r.html, /more than 32 fields/);
  assert.equal(state.pulled, pair.byteLength, "one chunk read, the other 3.9 MB not");
  assert.deepEqual(r.statements, []);

  // Within the byte limit but over the field limit, announced: refused as well.
  const small = "x=1&".repeat(FORM_LIMITS.maxFields + 1);
  const s = await refusedWithoutWork("/console/sign-up", small, { ...FORM, "content-length": String(small.length) });
  assert.equal(s.res.status, 413);
  assert.deepEqual(s.statements, []);
});

test("a multipart console form is read within the same limits", async () => {
  const c = createClient(h);
  await c.get("/console/sign-in");
  const form = (fields: number) => {
    const fd = new FormData();
    fd.append("_csrf", c.csrf());
    fd.append("email", "someone@example.com");
    for (let i = 2; i < fields; i++) fd.append(`x${i}`, "y");
    return fd;
  };
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const ok = await post("/console/sign-in", form(FORM_LIMITS.maxFields), { cookie, "x-forwarded-for": c.ip });
  assert.equal(ok.status, 200, "a multipart form within the limits is read like an urlencoded one");
  await ok.arrayBuffer();
  const over = await refusedWithoutWork("/console/sign-in", form(FORM_LIMITS.maxFields + 1), { cookie, "x-forwarded-for": c.ip });
  assert.equal(over.res.status, 413);
  assert.deepEqual(over.statements, []);
});

test("over a real socket: a chunked console upload is refused and the server stops taking bytes", async () => {
  const server = await serve(h.app.fetch, { port: 0, hostname: "127.0.0.1" });
  const cap = 200_000_000;
  try {
    const outcome = await chunkedUpload(server.port, "/console/sign-in", { "content-type": "application/x-www-form-urlencoded" }, cap);
    // The 413 comes after what unread-body.ts reads off and throws away (DRAIN_MAX_BYTES),
    // with Connection: close; a client still writing may see the close first.
    assert.ok(outcome.status === 413 || /EPIPE|ECONNRESET/.test(outcome.err ?? ""), JSON.stringify(outcome));
    // Accepted: the 32 KiB read, the bytes read off and what the loopback socket buffers
    // hold; not the upload.
    const bound = FORM_LIMITS.maxBytes + DRAIN_MAX_BYTES + 32_000_000;
    assert.ok(bound < cap / 2);
    assert.ok(outcome.sentAtEnd < bound, `the server kept reading: ${outcome.sentAtEnd} bytes accepted`);
  } finally {
    await server.close(1000);
  }
});

test(`a paid call's form of 216,363 tiny parts (11.9 MB) is refused at part ${MAX_FORM_PARTS + 1}, before limits, money or the product`, async () => {
  const c = await h.customer({ creditKrw: 1000 });
  const part = '--b\r\nContent-Disposition: form-data; name="size"\r\n\r\nx\r\n';
  // No close delimiter: a parser that read every part would answer "could not be read";
  // the answer names the part limit, so the parse stopped there.
  const body = new TextEncoder().encode(part.repeat(216_363) + "--b");
  assert.ok(body.length > 11_800_000 && body.length < 12_000_000, String(body.length));
  const balance = (await h.admin("GET", `/orgs/${c.orgId}`)).json.balanceKrw;
  const res = await post("/v1.0/removebg", body, { "x-api-key": c.liveKey, "content-type": "multipart/form-data; boundary=b" });
  assert.equal(res.status, 400);
  const e = (await res.json()) as { errors: { code: string; title: string }[] };
  assert.deepEqual(e.errors[0], { code: "invalid_parameter", title: `The form has more than ${MAX_FORM_PARTS} parts` });
  assert.equal((await h.admin("GET", `/orgs/${c.orgId}`)).json.balanceKrw, balance, "nothing held or charged");
});
