// The access log: one line per request through the real (pino) logger, carrying the
// request ID the client was given, and naming the route pattern — never the raw path
// or query string, where IDs, e-mails or a misplaced key could sit.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { buildApp } from "../../src/wiring/app.ts";
import { createLogger } from "../../src/wiring/logger.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { gatewayHarness, postRemovebg, randomIp, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";

let g: GatewayHarness;
const lines: string[] = [];
let app: ReturnType<typeof buildApp>["app"];
before(async () => {
  g = await gatewayHarness();
  // The same services, wired with the production logger writing into `lines`.
  app = buildApp(g.h.services, {
    operatorToken: OPERATOR_TOKEN,
    log: createLogger("debug", (line) => lines.push(line)),
    isShuttingDown: () => false,
    remoteAddress: () => "127.0.0.1",
  }).app;
});
after(() => g.close());

type Line = Record<string, unknown>;
const accessLines = (from: number): Line[] =>
  lines
    .slice(from)
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.msg === "request");

test("one access line per request, with the request ID the client got", async () => {
  const c = await g.h.customer({ creditKrw: 500 });
  const from = lines.length;
  const ip = randomIp();
  const answers = [
    await postRemovebg(app, ip, c.liveKey, { image_file: TINY_PNG, size: "preview" }),
    await postRemovebg(app, ip, undefined, { image_file: TINY_PNG }),
    await app.request("/no/such/page"),
    await app.request(`/admin/v1/orgs/${c.orgId}`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } }),
  ];
  for (const res of answers) await res.arrayBuffer();
  const got = accessLines(from);
  assert.equal(got.length, answers.length, JSON.stringify(got));
  for (const [i, res] of answers.entries()) {
    const id = res.headers.get("x-pd-request-id");
    assert.ok(id, "every answer has a request ID");
    assert.equal(got[i]!.requestId, id);
    assert.equal(got[i]!.status, res.status);
    assert.equal(got[i]!.level, "info");
    assert.equal(typeof got[i]!.ms, "number");
    assert.match(String(got[i]!.time), /^\d{4}-\d\d-\d\dT/);
  }
  assert.deepEqual(
    got.map((l) => [l.route, l.code ?? null]),
    [
      ["/v1.0/removebg", null],
      ["/v1.0/removebg", "invalid_api_key"],
      ["unmatched", "not_found"],
      ["/admin/v1/orgs/:orgId", null],
    ],
  );
});

test("the access line names the route pattern, never the path's IDs or the query string", async () => {
  const c = await g.h.customer({ creditKrw: 500 });
  const paid = await postRemovebg(app, randomIp(), c.liveKey, { image_file: TINY_PNG, size: "preview" });
  const requestId = paid.headers.get("x-pd-request-id")!;
  await paid.arrayBuffer();
  const from = lines.length;
  const view = await app.request(`/admin/v1/requests/${requestId}`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  assert.equal(view.status, 200);
  await view.arrayBuffer();
  const marker = "querymarker7f3a";
  await (await postRemovebg(app, randomIp(), c.liveKey, { image_file: TINY_PNG }, { query: `?note=${marker}` })).arrayBuffer();
  const text = lines.slice(from).join("\n");
  const got = accessLines(from);
  assert.equal(got[0]!.route, "/admin/v1/requests/:requestId");
  assert.ok(!text.includes(requestId), "the viewed request's ID is not in the access line");
  assert.ok(!text.includes(c.orgId));
  assert.ok(!text.includes(marker), "the query string is not logged");
});

test("health and metrics polls log at debug, so an info-level log is not flooded", async () => {
  const from = lines.length;
  await (await app.request("/healthz")).arrayBuffer();
  await (await app.request("/metrics", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })).arrayBuffer();
  await (await app.request("/metrics")).arrayBuffer(); // refused: worth seeing at info
  assert.deepEqual(
    accessLines(from).map((l) => [l.route, l.status, l.level]),
    [
      ["/healthz", 200, "debug"],
      ["/metrics", 200, "debug"],
      ["/metrics", 401, "info"],
    ],
  );
});
