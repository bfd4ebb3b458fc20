// `npm run test:load`: the long load run, on demand. Prints the summary
// table against the targets and the money/permit checks; exits non-zero only when a
// correctness check fails (an unexpected answer, unbalanced books, a leaked permit),
// not when a throughput target is missed on a busy machine.
//
// Rows carry a baseline measured in the same run: the refusals against a bare
// Hono app answering the same 401, the paid path against the stand-in product alone; the
// last row is the key-less refusal on the embedded default (PGlite, in-process limiter).
// Settings (environment): LOAD_SECONDS (20 per scenario), STUB_DELAY_MS (50),
// LOAD_ORGS (64), LOAD_PAID_CONNECTIONS (128), LOAD_REJECT_CONNECTIONS (64),
// LOAD_GATEWAY=0 / LOAD_MODEL=0 to skip the gateway / real-model run, MODEL_SECONDS (60), MODEL_CONNECTIONS (8),
// MODEL_TEST_CONNECTIONS (8: test-key callers beside the live ones; the table reports
// each class: admitted, refused, p50/p99, Retry-After against the actual wait),
// MODEL_GLOBAL_CONCURRENCY (4).
// The fairness run (LOAD_FAIRNESS=0 to skip): a small global cap in front of a stand-in
// product of fixed duration, greedy callers against callers that wait Retry-After;
// FAIR_SECONDS (60), FAIR_JOB_MS (2000), FAIR_GLOBAL_CONCURRENCY (4), FAIR_GREEDY (6),
// FAIR_HONOURING (4), FAIR_TEST (2), FAIR_GREEDY_RETRY_MS (100).
// Needs DATABASE_URL and REDIS_URL (a scratch database and Redis db 12 are used).
import { loadavg, cpus } from "node:os";
import { formatOpenLoopNotes, formatTable, TABLE_NOTES } from "../test/load/table.ts";
import { runGatewaySuite } from "../test/load/suite.ts";
import { unloggedAnswers } from "../test/load/run-scenario.ts";
import { runModelScenario, formatModelTable } from "../test/load/model-run.ts";
import { runFairnessScenario, formatFairnessTable } from "../test/load/fairness-run.ts";
import { storesSkip } from "../test/load/stack.ts";

const num = (name: string, def: number) => (process.env[name] ? Number(process.env[name]) : def);

if (storesSkip) {
  console.error(`test:load needs real stores: ${storesSkip}`);
  process.exit(2);
}

const machine = () => `load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}, ${cpus().length} cores`;
const log = (l: string) => console.error(`[load] ${l}`);
let failed = false;

console.log(`# Pixeldrop load run, ${new Date().toISOString()}`);
console.log(`machine before: ${machine()}`);
if (process.env.LOAD_GATEWAY !== "0") {
  const run = await runGatewaySuite({
    seconds: num("LOAD_SECONDS", 20),
    stubDelayMs: num("STUB_DELAY_MS", 50),
    orgs: num("LOAD_ORGS", 64),
    paidConnections: num("LOAD_PAID_CONNECTIONS", 128),
    rejectionConnections: num("LOAD_REJECT_CONNECTIONS", 64),
    overCapConnections: num("LOAD_OVERCAP_CONNECTIONS", 64),
    log,
  });
  console.log(`\n## Gateway (split deployment: gateway process + fixed-delay stand-in product), ${machine()}\n`);
  console.log(formatTable(run.results));
  console.log(`\n${formatOpenLoopNotes(run.results)}`);
  console.log(`\n${TABLE_NOTES}`);
  console.log(`stand-in product used ${run.stubProductCpu.toFixed(1)} CPU s over the runs.`);
  const m = run.money;
  console.log(
    `money, paid orgs: ${m.paid.orgs} orgs, ${m.paid.captures} captures = ${m.paid.logged200} logged 200s, ${m.paid.chargedKrw.toLocaleString("en-US")} KRW charged; every hold settled, balance = credits − captures.`,
  );
  console.log(`money, over-cap org: ${m.overCap.captures} captures = ${m.overCap.logged200} logged 200s; settled.`);
  console.log(`permits still held after the runs: ${run.leakedPermits}`);
  if (run.leakedPermits !== 0) failed = true;
  for (const r of run.results) {
    if (unloggedAnswers(r) > 0) {
      console.log(`"${r.name}": ${unloggedAnswers(r)} answers the client got are missing from the access log`);
      failed = true;
    }
    if (r.unexpected.length) {
      console.log(`UNEXPECTED answers in "${r.name}": ${r.unexpected.join(", ")}`);
      failed = true;
    }
  }
  const met = run.results.filter((r) => r.met).length;
  console.log(`targets met: ${met} of ${run.results.length}`);
}

if (process.env.LOAD_FAIRNESS !== "0") {
  const fr = await runFairnessScenario({
    seconds: num("FAIR_SECONDS", 60),
    jobMs: num("FAIR_JOB_MS", 2000),
    globalCap: num("FAIR_GLOBAL_CONCURRENCY", 4),
    greedy: num("FAIR_GREEDY", 6),
    honouring: num("FAIR_HONOURING", 4),
    testCallers: num("FAIR_TEST", 2),
    greedyRetryMs: num("FAIR_GREEDY_RETRY_MS", 100),
    log,
  });
  console.log(`\n## Fair at the cap (gateway + fixed-duration stand-in product), ${machine()}\n`);
  console.log(formatFairnessTable(fr));
  if (!fr.ok) failed = true;
}

if (process.env.LOAD_MODEL !== "0") {
  log("real model run (INFERENCE_BACKEND=wasm, POOL_SIZE=1)");
  const mr = await runModelScenario({
    seconds: num("MODEL_SECONDS", 60),
    connections: num("MODEL_CONNECTIONS", 8),
    testConnections: num("MODEL_TEST_CONNECTIONS", 8),
    globalCap: num("MODEL_GLOBAL_CONCURRENCY", 4),
    log,
  });
  console.log(`\n## Real model (wasm, POOL_SIZE=1), more callers than the pool holds, ${machine()}\n`);
  console.log(formatModelTable(mr));
  if (!mr.ok) failed = true;
}

console.log(`\nmachine after: ${machine()}`);
console.log(failed ? "RESULT: a correctness check FAILED (see above)" : "RESULT: all correctness checks passed");
process.exit(failed ? 1 : 0);
