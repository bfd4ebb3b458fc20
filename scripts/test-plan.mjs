// Which test files run first (the longest, so the lanes end together), which run alone,
// and which make the quick run. The durations behind the order come from the full run's
// "slowest jobs" table (scripts/run-tests.mjs prints it at the end).

/** Lanes when PD_TEST_LANES is not set. */
export const DEFAULT_LANES = 3;

/** Started first, in this order: the longest jobs of a full run. */
const SLOW = [
  "test/library/pack.test.ts",
  "test/load/load.test.ts",
  "test/inference/session-model.test.ts",
  "test/assets/int8-masks.test.ts",
  "test/library/remover.test.ts",
  "test/product/real-photos.test.ts",
  "test/faults/store-outage.test.ts",
  "test/faults/process-kill.test.ts",
  "test/money/http-concurrency.test.ts",
  "test/observability/shutdown.test.ts",
  "test/product/uncertainty-model.test.ts",
  "test/product/responsive.test.ts",
  "test/deploy/built-output.test.ts",
  "test/console/playground-browser.test.ts",
  "test/openapi/collection-newman.test.ts",
  "test/limits/redis-limiter.test.ts",
  "test/abuse/slowloris.test.ts",
  "test/db/db.test.ts",
  "test/deno/start.test.ts",
  "test/deploy/dockerfile.test.ts",
  "test/money/gateway-processes.test.ts",
  "test/money/product-failures.test.ts",
  "test/cli/cli.test.ts",
  "test/faults/capture-outage.test.ts",
];

/**
 * The quick run (`--quick`): the files that need no server, no model, no browser, no
 * spawned process and no database (an in-memory PGlite alone costs seconds per file).
 * A path ending in "/" means the whole folder, less NOT_QUICK.
 */
const QUICK = [
  "test/architecture/",
  "test/imaging/",
  "test/assets/derived-model.test.ts",
  "test/assets/quantise.test.ts",
  "test/assets/quantise-static.test.ts",
  "test/billing/group-writer.test.ts",
  "test/billing/kst-prices.test.ts",
  "test/billing/recent-spend.test.ts",
  "test/gateway/client-address.test.ts",
  "test/gateway/held.test.ts",
  "test/http/multipart.test.ts",
  "test/http/read-body.test.ts",
  "test/inference/manifest.test.ts",
  "test/inference/session-stub.test.ts",
  "test/inference/tensor.test.ts",
  "test/keys/format-hash.test.ts",
  "test/keys/known-keys.test.ts",
  "test/limits/invalid-key-guard.test.ts",
  "test/limits/memory-limiter.test.ts",
  "test/limits/retry-after-sources.test.ts",
  "test/observability/logger.test.ts",
  "test/openapi/postman.test.ts",
  "test/product/admission.test.ts",
];

/** In a QUICK folder but not quick: it spawns Deno. */
const NOT_QUICK = ["test/imaging/deno.test.ts"];

/**
 * Run after the parallel lanes, one at a time: they check that a Retry-After matches the
 * wait that follows, which a machine loaded by the other lanes stretches.
 */
const ALONE = ["test/gateway/paid-first.test.ts", "test/product/overload.test.ts"];

/** A path ending in "/" names a folder and everything under it; any other, one file. */
const covers = (path, file) => (path.endsWith("/") ? file.startsWith(path) : file === path);
const matches = (file, list) => list.some((p) => covers(p, file));

export function isQuick(file) {
  return matches(file, QUICK) && !matches(file, NOT_QUICK);
}

export function runsAlone(file) {
  return matches(file, ALONE);
}

export function slowFirst(files) {
  const rank = (f) => {
    const i = SLOW.findIndex((p) => covers(p, f));
    return i < 0 ? SLOW.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
}
