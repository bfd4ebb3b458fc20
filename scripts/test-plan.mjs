// Which test files run first (the longest, so the lanes end together) and which ones the
// quick run leaves out. The durations behind the order come from the full run's
// "slowest jobs" table (scripts/run-tests.mjs prints it at the end).

/** Lanes when PD_TEST_LANES is not set. */
export const DEFAULT_LANES = 3;

/** Started first, in this order: the longest jobs of a full run. */
const SLOW = [
  "test/library/pack.test.ts",
  "test/library/remover.test.ts",
  "test/load/load.test.ts",
  "test/faults/process-kill.test.ts",
  "test/observability/shutdown.test.ts",
  "test/deploy/built-output.test.ts",
  "test/cli/batch.test.ts",
  "test/faults/store-outage.test.ts",
  "test/product/real-photos.test.ts",
  "test/product/overload.test.ts",
  "test/abuse/slowloris.test.ts",
  "test/inference/session-model.test.ts",
  "test/assets/int8-masks.test.ts",
  "test/openapi/collection-newman.test.ts",
  "test/money/http-concurrency.test.ts",
  "test/console/playground-browser.test.ts",
  "test/product/responsive.test.ts",
  "test/money/product-failures.test.ts",
  "test/cli/cli.test.ts",
  "test/limits/redis-limiter.test.ts",
  "test/deno/start.test.ts",
  "test/console/browser.test.ts",
  "test/inference/mask-worker.test.ts",
  "test/money/gateway-processes.test.ts",
  "test/product/uncertainty-model.test.ts",
];

/**
 * Left out of `--quick`: files that start servers or processes, run the real model, drive a
 * browser, or take more than a few seconds. A path ending in "/" means the whole folder.
 */
const NOT_QUICK = [
  // Whole folders: processes killed and restarted, stores stopped, the package packed and
  // installed, Deno and vitest runs, load and soak.
  "test/abuse/",
  "test/cli/",
  "test/deno/",
  "test/deploy/",
  "test/faults/",
  "test/fuzz/",
  "test/library/",
  "test/load/",
  "test/money/",
  "test/soak/",
  "test/vitest/",
  // The real model.
  "test/assets/int8-masks.test.ts",
  "test/inference/assemble.test.ts",
  "test/inference/mask-worker.test.ts",
  "test/inference/model-bytes.test.ts",
  "test/inference/pool.test.ts",
  "test/inference/session-model.test.ts",
  "test/product/overload.test.ts",
  "test/product/pipeline-bands.test.ts",
  "test/product/real-photos.test.ts",
  "test/product/responsive.test.ts",
  "test/product/uncertainty-model.test.ts",
  // A browser, a server process or Deno.
  "test/client/browser.test.ts",
  "test/console/browser.test.ts",
  "test/console/playground-browser.test.ts",
  "test/http/refused-upload.test.ts",
  "test/imaging/deno.test.ts",
  "test/limits/redis-restart.test.ts",
  "test/observability/logger-exit.test.ts",
  "test/observability/shutdown.test.ts",
  "test/openapi/collection-newman.test.ts",
  // Thousands of generated requests.
  "test/openapi/generated-requests.test.ts",
];

/**
 * Run after the parallel lanes, one at a time: they check that a Retry-After matches the
 * wait that follows, which a machine loaded by the other lanes stretches.
 */
const ALONE = ["test/gateway/paid-first.test.ts", "test/product/overload.test.ts"];

const matches = (file, list) => list.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p));

export function isQuick(file) {
  return !matches(file, NOT_QUICK);
}

export function runsAlone(file) {
  return matches(file, ALONE);
}

export function slowFirst(files) {
  const rank = (f) => {
    const i = SLOW.findIndex((p) => (p.endsWith("/") ? f.startsWith(p) : f === p));
    return i < 0 ? SLOW.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
}
