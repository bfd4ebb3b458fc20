// The short load run that `npm test` includes: a few seconds of each scenario against
// a real gateway process on real Postgres + Redis. It asserts correctness only (every
// answer one of the scenario's expected codes, the books balance, no permit left
// taken), never throughput: this machine is shared and timings belong in
// `npm run test:load`. The table is printed for whoever reads the log.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runGatewaySuite } from "./suite.ts";
import { unloggedAnswers } from "./run-scenario.ts";
import { formatTable } from "./table.ts";
import { storesSkip } from "./stack.ts";

test("short load run: expected answers only, books balance, no permit leaked", { skip: storesSkip, timeout: 300_000 }, async () => {
  const run = await runGatewaySuite({
    seconds: 3,
    stubDelayMs: 20,
    orgs: 8,
    paidConnections: 16,
    rejectionConnections: 16,
    overCapConnections: 12,
  });
  console.log(formatTable(run.results));
  for (const r of run.results) {
    assert.deepEqual(r.unexpected, [], `${r.name}: only expected answers (got ${JSON.stringify(r.answers)})`);
    assert.equal(r.client.timeouts, 0, `${r.name}: no client timeouts`);
    assert.ok(Object.values(r.answers).reduce((a, b) => a + b, 0) > 0, `${r.name}: the server answered something`);
    assert.equal(unloggedAnswers(r), 0, `${r.name}: every answer the client got is in the access log`);
  }
  const [paidAtRate, paid, , guard, , overCap, noKeyEmbedded] = run.results;
  assert.ok((noKeyEmbedded!.answers["401 invalid_api_key"] ?? 0) > 0, "the embedded default refused key-less calls");
  assert.ok((paid!.answers["200"] ?? 0) > 0, "paid calls succeeded");
  // The open loop offers rate × seconds requests and waits for every answer.
  assert.equal(paidAtRate!.client.byStatus["200"], paidAtRate!.offered!.rate * 3, "every request offered at the fixed rate answered 200");
  assert.ok((guard!.answers["429 rate_limited"] ?? 0) > 0, "the invalid-key guard turned one address away");
  assert.ok((overCap!.answers["429 rate_limited"] ?? 0) > 0, "the org cap refused the excess");
  assert.ok((overCap!.answers["200"] ?? 0) > 0, "the org cap let its two slots through");
  // checkMoney already asserted each org's invariants; the totals must agree too.
  assert.equal(run.money.paid.captures, run.money.paid.logged200);
  assert.equal(run.money.overCap.captures, overCap!.answers["200"] ?? 0, "one capture per 200 of the capped org");
  assert.equal(run.leakedPermits, 0, "every permit given back");
});
