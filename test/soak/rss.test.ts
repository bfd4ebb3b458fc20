import { test } from "node:test";
import assert from "node:assert/strict";
import { afterWarmup, readRssMb, slopeMbPerMin } from "./rss.ts";

test("the slope of a steady climb is its rate per minute", () => {
  const climb = Array.from({ length: 30 }, (_, i) => ({ t: i * 10, mb: 200 + i * 0.5 })); // 0.5 MB per 10 s
  assert.ok(Math.abs(slopeMbPerMin(climb) - 3) < 1e-9);
});

test("a flat series with noise has a slope near zero; too few samples give NaN", () => {
  const flat = Array.from({ length: 40 }, (_, i) => ({ t: i * 5, mb: 300 + (i % 2 === 0 ? 2 : -2) }));
  assert.ok(Math.abs(slopeMbPerMin(flat)) < 0.5);
  assert.ok(Number.isNaN(slopeMbPerMin([{ t: 0, mb: 1 }])));
});

test("warm-up samples are left out of the trend", () => {
  const s = [{ t: 0, mb: 100 }, { t: 30, mb: 250 }, { t: 60, mb: 300 }, { t: 90, mb: 300 }];
  assert.deepEqual(afterWarmup(s, 60).map((x) => x.t), [60, 90]);
  assert.equal(slopeMbPerMin(afterWarmup(s, 60)), 0);
});

test("this process's RSS can be read", async () => {
  const mb = await readRssMb(process.pid);
  assert.ok(mb > 10 && mb < 100_000, `RSS ${mb} MB`);
});
