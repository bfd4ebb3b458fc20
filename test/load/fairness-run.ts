// Fair at the cap: does a caller that waits as told get in while others hammer? A
// gateway process with a small global cap in front of a stand-in product of fixed
// duration (stub-product.ts: every job takes `jobMs`), and three kinds of caller, each
// with a key (and an org) of its own, all closed loops (the next call is sent as soon
// as an answer is in):
// - greedy live callers ignore Retry-After: after a refusal they ask again after
//   `greedyRetryMs`, so they are there the moment a slot frees;
// - honouring live callers wait the Retry-After of every refusal, as the spec's client
//   contract says;
// - honouring test callers do the same with test keys (paid calls first: they get in
//   once their place in line is promoted, TEST_MAX_WAIT_MS).
// Reported per class: 200s and their share, each caller's share, how long the slowest
// caller waited for its first cut-out, the longest stretch a caller spent refused, and
// the Retry-After of a call's first refusal against the time it really took to get in.
import { loadavg } from "node:os";
import { checkMoney, heldPermits, waitForPermits, type MoneyReport } from "./checks.ts";
import { TINY_PNG } from "./scenarios.ts";
import { createCustomers, startLoadStack, type Customer } from "./stack.ts";
import { startStubProduct } from "./suite.ts";
import { outcomeOf, sendRemovebg, tally } from "../support/removebg-request.ts";
import { over } from "../support/server-process.ts";
import { CallTracker, classRow, newClassStats, type ClassStats } from "./class-stats.ts";

export interface FairnessOptions {
  seconds: number;
  jobMs: number;
  globalCap: number;
  greedy: number;
  honouring: number;
  testCallers: number;
  greedyRetryMs: number;
  log?: (l: string) => void;
}

type Kind = "greedy live" | "honouring live" | "honouring test";

interface CallerRecord {
  kind: Kind;
  admitted: number;
  /** ms from the start of the run to the answer of its first 200 (undefined: none). */
  firstCutOutMs?: number;
  /** Longest time from a refusal to the sending of the attempt that got in (or to the end of the run). */
  longestRefusedMs: number;
  /** The longest stretch had not ended when the run did. */
  stillRefusedAtEnd: boolean;
}

export interface FairnessClassRow {
  kind: Kind;
  callers: number;
  admitted: number;
  share: number;
  perCaller: string;
  slowestFirstCutOutMs: number;
  withoutCutOut: number;
  longestRefusedMs: number;
  longestOpen: boolean;
  refusedBy: string;
  retryAfter: string;
  waited: string;
  firstRetryAdmitted: string;
}

export interface FairnessResult {
  seconds: number;
  options: FairnessOptions;
  classes: FairnessClassRow[];
  ok200: number;
  /** What the cap can pass at jobMs per job: globalCap × run length ÷ jobMs. */
  capacity: number;
  unexpected: string[];
  clientFailures: number;
  money: MoneyReport;
  leakedPermits: number;
  load1Before: number;
  load1After: number;
  ok: boolean;
}

const EXPECTED = new Set(["200", "429 rate_limited", "429 test_quota_exceeded"]);

export async function runFairnessScenario(o: FairnessOptions): Promise<FairnessResult> {
  const log = o.log ?? (() => {});
  const load1Before = loadavg()[0];
  const product = await startStubProduct(o.jobMs);
  try {
    const stack = await startLoadStack({ PRODUCT_URL: product.url, GLOBAL_CONCURRENCY: String(o.globalCap) });
    try {
      log(`fairness: server pid ${stack.server.pid}, stand-in product pid ${product.pid} (${o.jobMs} ms per job), global cap ${o.globalCap}`);
      const live = o.greedy + o.honouring;
      const customers = await createCustomers(stack.admin, live + o.testCallers, 1_000_000);
      const callers: { key: string; kind: Kind; customer: Customer }[] = [
        ...customers.slice(0, o.greedy).map((c) => ({ key: c.liveKey, kind: "greedy live" as const, customer: c })),
        ...customers.slice(o.greedy, live).map((c) => ({ key: c.liveKey, kind: "honouring live" as const, customer: c })),
        ...customers.slice(live).map((c) => ({ key: c.testKey, kind: "honouring test" as const, customer: c })),
      ];
      const stats = new Map<Kind, ClassStats>(callers.map((c) => [c.kind, newClassStats()]));
      const send = over(stack.url);
      let clientFailures = 0;
      const t0 = performance.now();
      const endAt = t0 + o.seconds * 1000;
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, Math.min(ms, endAt - performance.now()))));

      const run = async (key: string, kind: Kind): Promise<CallerRecord> => {
        const rec: CallerRecord = { kind, admitted: 0, longestRefusedMs: 0, stillRefusedAtEnd: false };
        const tracker = new CallTracker(stats.get(kind)!);
        let refusedSince: number | undefined;
        while (performance.now() < endAt) {
          const sentAt = performance.now();
          let out;
          try {
            out = await outcomeOf(await sendRemovebg((p, init) => send(p, { ...init, signal: AbortSignal.timeout(150_000) }), key, { image_file: TINY_PNG, size: "preview" }));
          } catch {
            clientFailures++;
            await sleep(1000);
            continue;
          }
          const answeredAt = performance.now();
          tracker.answer(out, sentAt, answeredAt);
          if (out.status === 200) {
            rec.admitted++;
            rec.firstCutOutMs ??= answeredAt - t0;
            if (refusedSince !== undefined) rec.longestRefusedMs = Math.max(rec.longestRefusedMs, sentAt - refusedSince);
            refusedSince = undefined;
            continue;
          }
          refusedSince ??= answeredAt;
          if (kind === "greedy live") await sleep(o.greedyRetryMs);
          else await sleep(out.retryAfter === undefined ? 1000 : Number(out.retryAfter) * 1000);
        }
        if (refusedSince !== undefined && endAt - refusedSince > rec.longestRefusedMs) {
          rec.longestRefusedMs = endAt - refusedSince;
          rec.stillRefusedAtEnd = true;
        }
        return rec;
      };

      log(`fairness: ${o.greedy} greedy live, ${o.honouring} honouring live, ${o.testCallers} honouring test callers for ${o.seconds} s`);
      const records = await Promise.all(callers.map((c) => run(c.key, c.kind)));
      const wallS = (performance.now() - t0) / 1000;
      // Every call holds a global permit while it runs, so these show any permit left taken.
      const permitKeys = ["global", "global-test", ...customers.map((c) => `org-live:${c.orgId}`)];
      await waitForPermits(stack.redis, permitKeys, 30_000);
      const leakedPermits = await heldPermits(stack.redis, permitKeys);
      const money = await checkMoney(stack.db, customers.map((c) => c.orgId));

      const ok200 = records.reduce((a, r) => a + r.admitted, 0);
      const classes: FairnessClassRow[] = [];
      const unexpected = new Set<string>();
      for (const [kind, s] of stats) {
        const mine = records.filter((r) => r.kind === kind);
        const row = classRow("live", s);
        for (const label of Object.keys(tally(s.outcomes))) if (!EXPECTED.has(label)) unexpected.add(label);
        const counts = mine.map((r) => r.admitted);
        const longest = mine.reduce((a, r) => (r.longestRefusedMs > a.longestRefusedMs ? r : a), mine[0]!);
        const cut = mine.filter((r) => r.firstCutOutMs !== undefined).map((r) => r.firstCutOutMs!);
        classes.push({
          kind,
          callers: mine.length,
          admitted: row.admitted,
          share: ok200 ? row.admitted / ok200 : 0,
          perCaller: `${Math.min(...counts)}–${Math.max(...counts)}`,
          slowestFirstCutOutMs: cut.length ? Math.max(...cut) : NaN,
          withoutCutOut: mine.length - cut.length,
          longestRefusedMs: longest.longestRefusedMs,
          longestOpen: longest.stillRefusedAtEnd,
          refusedBy: row.refusedBy,
          retryAfter: row.retryAfter,
          waited: row.waited,
          firstRetryAdmitted: row.firstRetryAdmitted,
        });
      }
      const everyoneServed = classes.every((c) => c.withoutCutOut === 0);
      return {
        seconds: wallS,
        options: o,
        classes,
        ok200,
        capacity: (o.globalCap * wallS * 1000) / o.jobMs,
        unexpected: [...unexpected],
        clientFailures,
        money,
        leakedPermits,
        load1Before,
        load1After: loadavg()[0],
        ok: unexpected.size === 0 && clientFailures === 0 && leakedPermits === 0 && everyoneServed,
      };
    } finally {
      await stack.close();
    }
  } finally {
    await product.stop();
  }
}

const sec = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "–");

export function formatFairnessTable(r: FairnessResult): string {
  const o = r.options;
  const head = [
    `${r.seconds.toFixed(0)} s, global cap ${o.globalCap}, stand-in product ${o.jobMs} ms per job; greedy callers ask again ${o.greedyRetryMs} ms after a refusal, honouring callers after its Retry-After; load average ${r.load1Before.toFixed(2)} before, ${r.load1After.toFixed(2)} after`,
    `200s: ${r.ok200} of the ${r.capacity.toFixed(0)} the cap passes at ${o.jobMs} ms per job (${((100 * r.ok200) / r.capacity).toFixed(0)} %)`,
    "",
    "| class | callers | 200s | share of 200s | 200s per caller (min–max) | slowest first cut-out | longest refused stretch | refused by code | first Retry-After p50 / p90 | actual wait to admission p50 / p90 | admitted on the first retry |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const rows = r.classes.map(
    (c) =>
      `| ${c.kind} | ${c.callers} | ${c.admitted} | ${(100 * c.share).toFixed(0)} % | ${c.perCaller} | ${sec(c.slowestFirstCutOutMs)}${c.withoutCutOut ? ` (${c.withoutCutOut} never)` : ""} | ${sec(c.longestRefusedMs)}${c.longestOpen ? " (still refused at the end)" : ""} | ${c.refusedBy} | ${c.retryAfter} | ${c.waited} | ${c.firstRetryAdmitted} |`,
  );
  const tail = [
    "",
    `money: ${r.money.captures} captures = ${r.money.logged200} logged live 200s, every hold settled; permits left: ${r.leakedPermits}; client failures: ${r.clientFailures}`,
    r.ok ? "met: every caller got a cut-out, no unexpected answer, books balanced" : `NOT MET${r.unexpected.length ? `: unexpected ${r.unexpected.join(", ")}` : ""}`,
  ];
  return [...head, ...rows, ...tail].join("\n");
}
