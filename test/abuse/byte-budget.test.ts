// Many concurrent uploads against the gateway's incoming-byte budget: uploads that do
// not fit are refused at once with 503 gateway_busy and Retry-After, are not charged,
// and the budget is whole again once the accepted ones finish. Uploads are held open
// mid-body (a stream we control) so they really overlap.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { MAX_BODY_BYTES } from "../../src/http/read-body.ts";
import { balanceOf, expectError, gatewayHarness, randomIp, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { findKeyLeaks } from "../support/key-scan.ts";

const logLines: string[] = [];
const issued: string[] = [];
const rows: string[] = [];
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true, logLines });
});
after(async () => {
  console.log(["\n## Concurrent uploads against the byte budget", "", "| budget | uploads | announced | accepted | 503 gateway_busy | in use after |", "|---:|---:|---|---:|---:|---:|", ...rows].join("\n"));
  await g?.close();
});

const BOUNDARY = "budgetfuzz";
const enc = new TextEncoder();
function multipartBytes(): Uint8Array {
  const head = enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="size"\r\n\r\npreview\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="image_file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
  const tail = enc.encode(`\r\n--${BOUNDARY}--\r\n`);
  const out = new Uint8Array(head.length + TINY_PNG.length + tail.length);
  out.set(head);
  out.set(TINY_PNG, head.length);
  out.set(tail, head.length + TINY_PNG.length);
  return out;
}

/** An upload whose body stops after its first bytes until `release()`. */
function heldUpload(app: { request: (r: Request) => Response | Promise<Response> }, key: string, announce: boolean) {
  const body = multipartBytes();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(body.subarray(0, 10));
    },
    async pull(c) {
      await gate;
      c.enqueue(body.subarray(10));
      c.close();
    },
  });
  const headers: Record<string, string> = {
    "x-api-key": key,
    "x-forwarded-for": randomIp(),
    "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (announce) headers["content-length"] = String(body.length);
  const init = { method: "POST", headers, body: stream, duplex: "half" } as RequestInit;
  const response = Promise.resolve(app.request(new Request("http://localhost/v1.0/removebg", init)));
  return { response, release: () => open(), size: body.length };
}

async function run(label: string, budgetBytes: number, uploads: number, announce: boolean) {
  const budget = createByteBudget(budgetBytes);
  // Concurrency caps lifted: this measures the byte budget, not the permits.
  const v = g.variant({ gatewayBudget: budget, config: { ORG_LIVE_CONCURRENCY: 100, GLOBAL_CONCURRENCY: 100 } });
  const c = await g.h.customer({ creditKrw: 100_000 });
  issued.push(c.liveKey, c.testKey);
  await g.h.admin("PATCH", `/orgs/${c.orgId}`, { dailyLimitKrw: 1_000_000 });
  const held = Array.from({ length: uploads }, () => heldUpload(v.app, c.liveKey, announce));
  // Refusals come back while the others are still mid-body.
  const settled = await Promise.all(held.map((u) => Promise.race([u.response, new Promise<null>((r) => setTimeout(() => r(null), 1500))])));
  const refused = settled.filter((r) => r !== null) as Response[];
  for (const res of refused) {
    const e = await expectError(res, 503, "gateway_busy");
    assert.match(e.retryAfter ?? "", /^[1-9]\d*$/, "Retry-After on gateway_busy");
  }
  const inUseWhileHeld = budget.inUse();
  assert.ok(inUseWhileHeld <= budgetBytes, `in use ${inUseWhileHeld} within ${budgetBytes}`);
  held.forEach((u) => u.release());
  const accepted = held.filter((_u, i) => settled[i] === null);
  for (const u of accepted) {
    const res = await u.response;
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
  }
  assert.equal(budget.inUse(), 0, "the budget is whole again");
  // The org paid for the accepted uploads only (preview: 22 KRW each), nothing for the refusals.
  assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 100_000 - 22 * accepted.length);
  rows.push(
    `| ${budgetBytes.toLocaleString("en")} | ${uploads} | ${announce ? `Content-Length ${held[0]!.size}` : "none (counted as 12,000,000)"} | ${accepted.length} | ${refused.length} | ${budget.inUse()} |`,
  );
  return { accepted: accepted.length, refused: refused.length };
}

test("announced uploads beyond the budget get 503 gateway_busy; the budget returns to full", async () => {
  const size = multipartBytes().length;
  const r = await run("announced", 3 * size, 8, true);
  assert.deepEqual(r, { accepted: 3, refused: 5 });
});

test("uploads without Content-Length each count as a whole 12 MB; the default budget takes 22 of them", async () => {
  const defaultBudget = g.h.config.RECEIVE_BUDGET_BYTES;
  const fit = Math.floor(defaultBudget / MAX_BODY_BYTES);
  const r = await run("chunked", defaultBudget, fit + 3, false);
  assert.deepEqual(r, { accepted: fit, refused: 3 });
});

test("no key text in anything logged during the run", () => {
  assert.deepEqual(findKeyLeaks(logLines, issued), []);
});
