// The per-request counter and histogram (src/metrics/hot-metrics.ts) read on /metrics
// exactly as prom-client's own Counter and Histogram would after the same calls: the
// same text, line for line, and the same JSON.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Counter, Histogram, Registry } from "prom-client";
import { HotCounter, HotHistogram } from "../../src/metrics/hot-metrics.ts";

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];

function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const labelNames = ["route", "code"] as const;
  const c = { name: "t_requests_total", help: "requests", labelNames };
  const h = { name: "t_duration_seconds", help: "durations", labelNames, buckets: BUCKETS };
  return {
    theirs,
    ours,
    counter: [new Counter({ ...c, registers: [theirs] }), new HotCounter({ ...c, registers: [ours] })] as const,
    histogram: [new Histogram({ ...h, registers: [theirs] }), new HotHistogram({ ...h, registers: [ours] })] as const,
  };
}

test("the same calls give the same exposition text and JSON as prom-client's Counter and Histogram", async () => {
  const p = pair();
  const calls: [string, string, number][] = [
    ["/v1.0/removebg", "invalid_api_key", 0.0004],
    ["/v1.0/removebg", "invalid_api_key", 0.001], // on a bound: counted in it
    ["/v1.0/removebg", "none", 0.2],
    ['/a "quoted"\\path', "none", 5],
    ["/v1.0/removebg", "none", 11], // above every bound: +Inf only
    ["/v1.0/removebg", "invalid_api_key", 0.05],
  ];
  for (const [route, code, seconds] of calls) {
    p.counter[0].inc({ route, code });
    p.counter[1].inc([route, code]);
    p.histogram[0].observe({ route, code }, seconds);
    p.histogram[1].observe([route, code], seconds);
  }
  p.counter[0].inc({ route: "/x", code: "none" }, 3);
  p.counter[1].inc(["/x", "none"], 3);
  assert.equal(await p.ours.metrics(), await p.theirs.metrics());
  // As a JSON consumer sees them (a field prom-client leaves undefined is not there).
  const asJson = async (r: Registry) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON())) as unknown;
  assert.deepEqual(await asJson(p.ours), await asJson(p.theirs));
  p.theirs.resetMetrics();
  p.ours.resetMetrics();
  assert.equal(await p.ours.metrics(), await p.theirs.metrics());
});

test("a call with the wrong number of label values is refused", () => {
  const p = pair();
  assert.throws(() => p.counter[1].inc(["/v1.0/removebg"]), /expected 2 label values/);
});
