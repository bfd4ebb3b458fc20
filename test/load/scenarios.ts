// The load scenarios: the paid path and the three cheap refusals. Each
// connection carries one customer's key, so the paid run never meets the per-org cap
// of 2 (two connections per org at most) while the over-cap run puts every
// connection on one org on purpose.
import { readFileSync } from "node:fs";
import { removebgInit } from "../support/removebg-request.ts";
import type { Customer } from "./stack.ts";
import type { Scenario } from "./run-scenario.ts";

/** 64 × 48 PNG: the cheapest image the pipeline accepts, so the gateway is what is measured. */
export const TINY_PNG = new Uint8Array(readFileSync(new URL("../fixtures/images/orient-upright.png", import.meta.url)));

/** A well-formed live key that does not exist (same shape as real ones: pd_live_ + 40 base62). */
export const UNKNOWN_KEY = `pd_live_${"Z".repeat(40)}`;

async function encoded(key: string | undefined, fields: Record<string, string | Uint8Array>) {
  const init = await removebgInit(key, fields);
  // autocannon announces the body's length itself; a second Content-Length would make
  // the request malformed.
  const { "content-length": _announced, ...headers } = init.headers as Record<string, string>;
  return { headers, body: init.body as Uint8Array };
}

/** A client address per request, cycling through 10.x.y.z so each one stays under the guard's 20 per minute. */
export function spreadIp(n: number): string {
  const i = n % 65_536;
  return `10.77.${i >> 8}.${i & 255}`;
}

export interface ScenarioSet {
  paid: Scenario;
  /** The paid load offered at the target's own rate (open loop): what the gateway adds at that rate, not under saturation. */
  paidAtTargetRate: Scenario;
  noKey: Scenario;
  badKeySpread: Scenario;
  badKeyOneIp: Scenario;
  badParameter: Scenario;
  overOrgCap: Scenario;
}

/** Seconds of the open-loop schedule run before the measured ones. */
export const OPEN_LOOP_WARMUP_S = 3;

export async function buildScenarios(o: {
  customers: Customer[];
  /** The org used for the over-cap run (not among the paid run's customers). */
  capCustomer: Customer;
  stubDelayMs: number;
  orgCap: number;
  connections: { paid: number; rejections: number; overCap: number };
}): Promise<ScenarioSet> {
  const preview = (key: string) => encoded(key, { image_file: TINY_PNG, size: "preview" });
  const paidBodies = await Promise.all(o.customers.map((c) => preview(c.liveKey)));
  const badKey = await preview(UNKNOWN_KEY);
  const noKey = await encoded(undefined, { image_file: TINY_PNG, size: "preview" });
  const badParam = await encoded(o.customers[0]!.liveKey, { image_file: TINY_PNG, size: "gigantic" });
  const cap = await preview(o.capCustomer.liveKey);
  const perOrg = Math.ceil(o.connections.paid / o.customers.length);
  if (perOrg > o.orgCap) throw new Error(`paid run needs ${perOrg} connections per org, above the cap of ${o.orgCap}`);

  const paid: Scenario = {
    name: "paid (live key, reserve+capture)",
    connections: o.connections.paid,
    // Connection i uses customer i mod n: at most `perOrg` connections on one org.
    connection: (i) => paidBodies[i % paidBodies.length]!,
    expected: ["200"],
    baseDelayMs: o.stubDelayMs,
    target: { reqPerSec: 600, addedP99Ms: 50 },
  };
  return {
    // The capacity: at 128 connections its latency is queueing by construction, so only
    // the rate is judged here; the added p99 is judged on the open loop below.
    paid: { ...paid, name: `${paid.name}, closed loop`, target: { reqPerSec: paid.target.reqPerSec } },
    // Judged after 3 s of the same schedule on the same sockets (docs/DECISIONS.md).
    paidAtTargetRate: { ...paid, name: `${paid.name}, open loop at ${paid.target.reqPerSec}/s`, rate: paid.target.reqPerSec, warmupSeconds: OPEN_LOOP_WARMUP_S },
    noKey: {
      name: "401 no key (many IPs)",
      connections: o.connections.rejections,
      connection: () => noKey,
      perRequest: (n) => ({ "x-forwarded-for": spreadIp(n) }),
      expected: ["401 invalid_api_key", "429 rate_limited"],
      baseDelayMs: 0,
      target: { reqPerSec: 5000, p99Ms: 50 },
    },
    badKeySpread: {
      name: "401 unknown key (many IPs)",
      connections: o.connections.rejections,
      connection: () => badKey,
      perRequest: (n) => ({ "x-forwarded-for": spreadIp(n) }),
      // An address comes round again after 65,536 requests; at a few thousand a second
      // that is within its minute, so the guard may answer for some of them.
      expected: ["401 invalid_api_key", "429 rate_limited"],
      baseDelayMs: 0,
      target: { reqPerSec: 4000 },
    },
    badKeyOneIp: {
      name: "429 invalid-key guard (one IP)",
      connections: o.connections.rejections,
      connection: () => ({ headers: { ...badKey.headers, "x-forwarded-for": "10.78.0.1" }, body: badKey.body }),
      expected: ["401 invalid_api_key", "429 rate_limited"],
      baseDelayMs: 0,
      target: { reqPerSec: 5000 },
    },
    badParameter: {
      name: "400 bad parameter (live key)",
      connections: o.connections.rejections,
      connection: () => badParam,
      expected: ["400 unsupported_parameter"],
      baseDelayMs: 0,
      target: { reqPerSec: 5000 },
    },
    overOrgCap: {
      name: `429 over org cap (1 org, ${o.connections.overCap} conns)`,
      connections: o.connections.overCap,
      connection: () => cap,
      expected: ["200", "429 rate_limited"],
      baseDelayMs: 0,
      target: { reqPerSec: 5000 },
    },
  };
}
