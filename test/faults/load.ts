// Load and after-checks shared by the fault suites. A load is a few clients per
// customer calling in a loop, each call recorded with when it started and ended, so a
// suite can ask what the answers during an outage were. The checks are the issue's
// list: every hold settled exactly once, balance = credits − captures, the charged
// calls are exactly the 200s that came with an image body, no permit left behind, and
// new calls flow.
import assert from "node:assert/strict";
import { createBilling } from "../../src/billing/index.ts";
import type { Db } from "../../src/db/index.ts";
import type { Limiter } from "../../src/limits/index.ts";
import { errorsByCode, type FaultRow } from "../support/fault-report.ts";
import { fixture } from "../support/harness.ts";
import { assertLogMatchesLedger, assertSettled, ledgerSummary } from "../support/money-checks.ts";
import { GLOBAL_KEY, heldPermits, orgLiveKey } from "../support/permits.ts";
import { removebgInit, type Outcome } from "../support/removebg-request.ts";

/** 64×48: preview tier, 22 KRW; the cheapest call the stub model runs. */
export const IMAGE = fixture("images/orient-upright.png");
export const PRICE = 22;

/** The long version (npm run test:faults) runs more calls and longer outages. */
export const LONG = process.env.PD_FAULTS === "long";

export interface Call extends Outcome {
  startedAt: number;
  endedAt: number;
  /** 200 only: the body is a whole PNG (signature and IEND). */
  bodyOk?: boolean;
}

export interface Customer {
  orgId: string;
  appId: string;
  liveKey: string;
  testKey: string;
}

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IEND = [0x49, 0x45, 0x4e, 0x44];

function isWholePng(b: Uint8Array): boolean {
  if (b.length < 20 || PNG_SIG.some((x, i) => b[i] !== x)) return false;
  // The IEND chunk type sits 8 bytes before the end (then its CRC).
  return IEND.every((x, i) => b[b.length - 8 + i] === x);
}

/** One call over a real socket; a connection error is recorded as status 0. */
export async function callOnce(baseUrl: string, key: string, timeoutMs = 60_000, tier: "preview" | "full" = "preview"): Promise<Call> {
  const startedAt = Date.now();
  // Full tier: no size field, 110 KRW reserved; the 64×48 output is then charged 22.
  const init = await removebgInit(key, tier === "preview" ? { image_file: IMAGE, size: "preview" } : { image_file: IMAGE });
  try {
    const res = await fetch(`${baseUrl}/v1.0/removebg`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const call: Call = { status: res.status, requestId: res.headers.get("x-pd-request-id") ?? "", startedAt, endedAt: 0 };
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status === 200) call.bodyOk = isWholePng(bytes);
    else {
      try {
        call.code = (JSON.parse(new TextDecoder().decode(bytes)) as { errors: { code: string }[] }).errors[0]!.code;
      } catch {
        call.code = "unreadable_body";
      }
    }
    const charged = res.headers.get("x-pd-charged-krw");
    if (charged !== null) call.chargedKrw = Number(charged);
    const retry = res.headers.get("retry-after");
    if (retry !== null) call.retryAfter = retry;
    call.endedAt = Date.now();
    return call;
  } catch (err) {
    const why = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    return { status: 0, code: `connection_error`, requestId: "", startedAt, endedAt: Date.now(), retryAfter: why };
  }
}

export interface Load {
  calls: Call[];
  /** Resolves once `n` calls were answered 200 (the load is being served); fails after `timeoutMs`. */
  served(n: number, timeoutMs?: number): Promise<void>;
  /** Stops the clients and waits for their last calls. */
  stop(): Promise<Call[]>;
}

/**
 * `perCustomer` clients per customer, each calling in a loop with `pauseMs` between
 * calls; `target(i)` picks the base URL of the i-th call (several gateways).
 */
export function startLoad(target: (i: number) => string, customers: readonly Customer[], perCustomer: number, pauseMs = 20): Load {
  const calls: Call[] = [];
  let running = true;
  let n = 0;
  const clients: Promise<void>[] = [];
  for (const c of customers) {
    for (let k = 0; k < perCustomer; k++) {
      clients.push(
        (async () => {
          while (running) {
            calls.push(await callOnce(target(n++), c.liveKey));
            // A 503 or 429 says when to come back; a load client keeps the pressure on instead.
            await new Promise((r) => setTimeout(r, pauseMs));
          }
        })(),
      );
    }
  }
  return {
    calls,
    async served(want, timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (calls.filter((c) => c.status === 200).length < want) {
        if (Date.now() > until) throw new Error(`the load was not served: ${JSON.stringify(calls.slice(-3))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      running = false;
      await Promise.all(clients);
      return calls;
    },
  };
}

/** Calls until one answers 200; resolves to the seconds from `since` to that answer's end. */
export async function secondsUntil200(baseUrl: string, key: string, since: number, timeoutMs = 60_000): Promise<{ seconds: number; calls: Call[] }> {
  const calls: Call[] = [];
  const until = Date.now() + timeoutMs;
  for (;;) {
    const c = await callOnce(baseUrl, key);
    calls.push(c);
    if (c.status === 200) return { seconds: (c.endedAt - since) / 1000, calls };
    if (Date.now() > until) throw new Error(`no 200 within ${timeoutMs} ms; last: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The answers a client gets while a store is down: 503 service_unavailable with a Retry-After in whole seconds. */
export function assertStoreDownAnswers(calls: readonly Call[], what: string): void {
  assert.ok(calls.length > 0, `${what}: some calls were answered during the outage`);
  for (const c of calls) {
    assert.deepEqual([c.status, c.code], [503, "service_unavailable"], `${what}: ${JSON.stringify(c)}`);
    assert.match(c.retryAfter ?? "", /^[1-9]\d*$/, `${what}: 503 carries Retry-After`);
  }
}

export interface AfterChecks {
  db: Db;
  limiter: Limiter;
  customers: readonly Customer[];
  calls: readonly Call[];
  /**
   * How holds left open by a fault end: "sweep-now" runs the sweeper once with a clock
   * past every hold's expiry (the short version; nothing may be running any more),
   * "wait" waits for the service's own sweeper to do it (the long version).
   */
  sweep: "sweep-now" | "wait";
  waitMs?: number;
}

/**
 * The after-fault checks; returns the ledger half of the table row. Throws (fails
 * the test) on the first broken invariant.
 */
export async function checkAfterFault(o: AfterChecks): Promise<Pick<FaultRow, "requests" | "ok200" | "errors" | "chargedKrw" | "charges" | "holdsOpenAfter" | "balanceCheck">> {
  const orgIds = o.customers.map((c) => c.orgId);
  const openHolds = async () => {
    const [r] = await o.db.query<{ n: number }>("SELECT count(*)::int AS n FROM holds WHERE state = 'open' AND org_id = ANY($1)", [orgIds]);
    return r!.n;
  };
  if (o.sweep === "sweep-now") {
    // Every call has ended, so an open hold belongs to a request that can no longer capture.
    await createBilling({ db: o.db, now: () => Date.now() + 24 * 3600_000, holdTtlMs: 1 }).sweepExpired();
  } else {
    const until = Date.now() + (o.waitMs ?? 120_000);
    while ((await openHolds()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
  }
  const holdsOpenAfter = await openHolds();

  let chargedKrw = 0;
  let charges = 0;
  for (const orgId of orgIds) {
    const s = await assertSettled(o.db, orgId);
    chargedKrw += s.capturedKrw;
    charges += s.captures;
    await assertLogMatchesLedger(o.db, orgId);
  }
  // Charged calls = the 200s that came with a whole image, by request ID.
  const captured = await o.db.query<{ request_id: string }>(
    "SELECT request_id FROM ledger_entries WHERE kind = 'capture' AND org_id = ANY($1)",
    [orgIds],
  );
  const delivered = o.calls.filter((c) => c.status === 200);
  for (const c of delivered) assert.ok(c.bodyOk, `200 ${c.requestId} came with a whole PNG body`);
  assert.deepEqual(
    captured.map((r) => r.request_id).sort(),
    delivered.map((c) => c.requestId).sort(),
    "charged requests = 200s with a body",
  );
  for (const c of o.calls) {
    if (c.status !== 200) assert.equal(c.chargedKrw, undefined, `an error is free: ${JSON.stringify(c)}`);
    assert.notEqual(c.status, 500, `no internal error: ${JSON.stringify(c)}`);
  }

  // No permit left behind: every org slot and the global set are free again.
  for (const orgId of orgIds) assert.equal(await heldPermits(o.limiter, orgLiveKey(orgId), 2), 0, `org ${orgId} permits free`);
  assert.equal(await heldPermits(o.limiter, GLOBAL_KEY, 32), 0, "global permits free");

  return {
    requests: o.calls.length,
    ok200: delivered.length,
    errors: errorsByCode(o.calls),
    chargedKrw,
    charges,
    holdsOpenAfter,
    balanceCheck: "ok",
  };
}

/** Every customer's next call is served and charged once. */
export async function assertNewCallsFlow(baseUrl: string, db: Db, customers: readonly Customer[]): Promise<Call[]> {
  const calls: Call[] = [];
  for (const c of customers) {
    const before = await ledgerSummary(db, c.orgId);
    const call = await callOnce(baseUrl, c.liveKey);
    assert.deepEqual([call.status, call.chargedKrw, call.bodyOk], [200, PRICE, true], `a new call flows: ${JSON.stringify(call)}`);
    assert.equal((await ledgerSummary(db, c.orgId)).captures, before.captures + 1);
    calls.push(call);
  }
  return calls;
}
