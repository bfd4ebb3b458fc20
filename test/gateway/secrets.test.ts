// No key text anywhere but the one issue/reissue answer (issue: "No key text in logs or
// rows"; spec §5.5): after a run of successful and failed calls, neither the captured
// log lines, nor any row of any table, nor what the gateway sends to the product
// contains a key or a long piece of one.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { buildApp } from "../../src/wiring/app.ts";
import { createLogger } from "../../src/wiring/logger.ts";
import { fixture, OPERATOR_TOKEN } from "../support/harness.ts";
import {
  gatewayHarness,
  getAccount,
  multipart,
  postRemovebg,
  productError,
  randomIp,
  scriptedProduct,
  TINY_PNG,
  type GatewayHarness,
} from "./helpers.ts";

const logLines: string[] = [];
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ logLines });
});
after(() => g.close());

/** The key itself and every 12-character piece of its secret part (labels show 4 + 4). */
function secretPieces(key: string): string[] {
  const secret = key.replace(/^pd_(test|live)_/, "");
  const pieces = [key];
  for (let i = 0; i + 12 <= secret.length; i++) pieces.push(secret.slice(i, i + 12));
  return pieces;
}

function assertNoKeys(where: string, text: string, keys: string[]) {
  for (const key of keys) {
    for (const piece of secretPieces(key)) {
      assert.ok(!text.includes(piece), `${where} contains key text (${key.slice(0, 12)}…)`);
    }
  }
}

test("keys never reach logs, table rows or the product service", async () => {
  const c = await g.h.customer({ creditKrw: 150 });
  const poor = await g.h.customer();
  const reissued = await g.h.admin("POST", `/keys/${c.testKeyId}/reissue`);
  const keys = [c.liveKey, c.testKey, poor.liveKey, poor.testKey, reissued.json.key as string];
  // A near miss of a real key (last character changed) is looked up and refused.
  const nearMiss = c.liveKey.slice(0, -1) + (c.liveKey.endsWith("A") ? "B" : "A");
  keys.push(nearMiss);

  const image = { image_file: TINY_PNG, size: "preview" };
  const statuses: number[] = [];
  const call = async (p: Response | Promise<Response>) => {
    const res = await p;

    statuses.push(res.status);
    await res.arrayBuffer();
  };
  await call(g.removebg(c.liveKey, image));
  await call(g.removebg(c.testKey, image));
  await call(g.removebg(reissued.json.key, { image_file: TINY_PNG }, { headers: { accept: "application/json" } }));
  await call(g.removebg(c.liveKey, { ...image, size: "hd" }));
  await call(g.removebg(c.liveKey, { image_file: fixture("images/png-bomb-20000x20000.png") }));
  await call(g.removebg(c.liveKey, { image_file: TINY_PNG }, { query: `?key=x` }));
  await call(g.removebg(nearMiss, image, { ip: randomIp() }));
  await call(g.removebg(poor.liveKey, image));
  await call(g.account(c.liveKey));
  await call(g.account(poor.testKey));

  // Failures that go through the logger: a product that breaks, and a store that throws.
  const product = scriptedProduct(
    () => Promise.reject(new Error("connection refused")),
    () => productError(500, "inference_failed"),
  );
  const broken = g.variant({ product: product.fn, sleep: async () => {} });
  await call(broken.removebg(c.liveKey, image));
  const billing = g.h.services.billing;
  const storeDown = g.variant({
    services: {
      billing: {
        ...billing,
        reserve: async () => {
          throw Object.assign(new Error("connection terminated"), { code: "ECONNRESET" });
        },
      },
    },
  });
  await call(storeDown.removebg(c.liveKey, image));
  await g.h.admin("POST", `/keys/${c.liveKeyId}/suspend`);
  await call(g.removebg(c.liveKey, image));

  assert.ok(statuses.includes(200) && statuses.some((s) => s >= 400 && s < 500) && statuses.some((s) => s >= 500), statuses.join());
  assert.ok(logLines.length > 0, "something was logged");
  assertNoKeys("a log line", logLines.join("\n"), keys);

  for (const req of product.seen) {
    assertNoKeys("a request to the product", JSON.stringify([...req.headers]), keys);
    assert.equal(req.headers.get("x-api-key"), null);
  }

  const tables = await g.h.services.db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  assert.ok(tables.length >= 8, tables.map((t) => t.table_name).join());
  for (const { table_name } of tables) {
    const rows = await g.h.services.db.query(`SELECT * FROM "${table_name}"`);
    assertNoKeys(`table ${table_name}`, JSON.stringify(rows), keys);
  }

  // Operator views of keys and requests show labels, never the key.
  const view = await g.h.admin("POST", `/keys/${c.liveKeyId}/unsuspend`);
  assert.match(view.json.label, /^pd_live_/);
  assertNoKeys("the key view", JSON.stringify(view.json), keys);
});

// The same traffic shape through the production (pino) logger, plus keys sent where
// they do not belong — another header, Authorization, a cookie, a form field, the
// query string, the path — whose text the gateway never looks at, so only the logger's
// own discipline (and its redaction) keeps it out. The metrics page is scanned too.
test("keys sent anywhere never reach the JSON log or the metrics page", async () => {
  const jsonLines: string[] = [];
  const app = buildApp(g.h.services, {
    operatorToken: OPERATOR_TOKEN,
    log: createLogger("debug", (line) => jsonLines.push(line)),
    isShuttingDown: () => false,
    remoteAddress: () => "127.0.0.1",
  }).app;
  const c = await g.h.customer({ creditKrw: 500 });
  const keys = [c.liveKey, c.testKey];
  const ip = randomIp();
  const image = { image_file: TINY_PNG, size: "preview" };
  const statuses: number[] = [];
  const requestIds: string[] = [];
  const call = async (p: Response | Promise<Response>) => {
    const res = await p;
    statuses.push(res.status);
    requestIds.push(res.headers.get("x-pd-request-id") ?? "");
    await res.arrayBuffer();
  };
  await call(postRemovebg(app, ip, c.liveKey, image));
  await call(postRemovebg(app, ip, c.testKey, image));
  await call(postRemovebg(app, ip, `${c.liveKey}x`, image)); // malformed: one character too many
  await call(postRemovebg(app, ip, undefined, image, { headers: { "api-key": c.liveKey } }));
  await call(postRemovebg(app, ip, undefined, image, { headers: { authorization: `Bearer ${c.liveKey}` } }));
  await call(postRemovebg(app, ip, undefined, image, { headers: { cookie: `api_key=${c.testKey}` } }));
  await call(postRemovebg(app, ip, undefined, { ...image, api_key: c.liveKey, x_api_key: c.testKey }));
  await call(postRemovebg(app, ip, c.liveKey, { ...image, api_key: c.liveKey }));
  await call(postRemovebg(app, ip, c.liveKey, image, { query: `?api_key=${c.liveKey}` }));
  await call(app.request(`/v1.0/removebg/${c.liveKey}`, { method: "POST", body: multipart(image) }));
  await call(app.request(`/v1.0/account?key=${c.testKey}`, { headers: { "x-forwarded-for": ip } }));
  await call(getAccount(app, ip, c.liveKey));

  assert.ok(statuses.includes(200) && statuses.includes(401) && statuses.includes(404), statuses.join());
  assert.ok(jsonLines.filter((l) => l.includes('"msg":"request"')).length >= statuses.length, "every call left an access line");
  assertNoKeys("a JSON log line", jsonLines.join("\n"), keys);

  const metrics = await app.request("/metrics", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  assert.equal(metrics.status, 200);
  const text = await metrics.text();
  assert.match(text, /pixeldrop_http_requests_total\{route="\/v1\.0\/removebg"/);
  assertNoKeys("the metrics page", text, keys);
  for (const id of [...requestIds, c.orgId, c.appId, "@example.com"]) {
    assert.ok(id && !text.includes(id), `the metrics page contains ${id}`);
  }
});
