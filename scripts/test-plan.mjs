// Which test files share a process, which run first (the longest, so the lanes end
// together), which run alone, and which make the quick run. The durations behind the order
// come from the full run's "slowest jobs" table (scripts/run-tests.mjs prints it at the end).

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
  "test/deploy/built-output.test.ts",
  "test/console/playground-browser.test.ts",
  "test/console/accessibility-browser.test.ts",
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
  "test/cli/reconcile.test.ts",
  "test/gateway/client-address.test.ts",
  "test/gateway/held.test.ts",
  "test/http/multipart.test.ts",
  "test/http/read-body.test.ts",
  "test/inference/gpu-doctor.test.ts",
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
 * Run after the parallel lanes, side by side: a file that cannot share the machine with
 * them would go here. None does: a test that involves time moves the service's clock or
 * waits on events, and passes however loaded the machine is (docs/TESTING.md).
 */
const ALONE = [];

/**
 * The files that run the real model on WebAssembly in the test process itself (its own
 * session, a pool's worker threads or the library), in two shared processes: the process
 * pays the first inference's baseline-code run once for the files after it
 * (test/support/file-group.mjs). Two, not one, so neither holds a lane for long; and one
 * file's sessions are released before the next file's start.
 */
const MODEL_GROUPS = [
  ["test/product/real-photos.test.ts", "test/product/uncertainty-model.test.ts", "test/library/remover.test.ts"],
  ["test/assets/int8-masks.test.ts", "test/inference/session-model.test.ts", "test/inference/model-bytes.test.ts", "test/inference/mask-worker.test.ts"],
];

/**
 * The files whose processes, or the processes they start, run the real model: they keep
 * V8's optimising compiler for WebAssembly. Every other job runs with
 * test/support/wasm-baseline-only.mjs preloaded (scripts/run-tests.mjs). A file that
 * starts running the real model must be added here, or its runs take several times longer.
 */
const REAL_MODEL = [
  ...MODEL_GROUPS.flat(),
  // A packed install's plain .mjs, and the same install read-only as another user.
  "test/library/pack.test.ts",
  // The installed CLI cutting out with the default model.
  "test/deploy/built-output.test.ts",
  // The CLI's own cut-out with the default model.
  "test/cli/cli.test.ts",
];

/**
 * Every other file shares a process with up to this many files of its folder: a test
 * process spends about 2 CPU-s loading and warming up the code (module graph, JIT) before
 * its tests do anything, which the files after the first in a group no longer pay.
 */
const GROUP_FILES = 6;

/**
 * Files that keep a process of their own besides SLOW and ALONE, and why: a file that
 * needs the process to itself goes here.
 */
const OWN_PROCESS = [
  // Its server must drain a refused 12.5 MB upload before closing, within a time limit;
  // after other files in the same process (a larger heap, longer collections) fetch saw
  // EPIPE in two runs of two, never alone.
  "test/http/refused-upload.test.ts",
  // Counts answers against per-request timeouts of a few hundred milliseconds.
  "test/load/open-loop.test.ts",
  // Exposes gc() for its process and the workers it starts (the image's --expose-gc), which
  // would switch the memory release on for the files beside it.
  "test/product/release-memory.test.ts",
];

/** A path ending in "/" names a folder and everything under it; any other, one file. */
const covers = (path, file) => (path.endsWith("/") ? file.startsWith(path) : file === path);
const matches = (file, list) => list.some((p) => covers(p, file));

export function isQuick(file) {
  return matches(file, QUICK) && !matches(file, NOT_QUICK);
}

export function runsRealModel(file) {
  return matches(file, REAL_MODEL);
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

/**
 * The processes to run `files` in (those that do not run alone), in the order to start
 * them: each an array of files, one file or a group that shares a process. The model
 * groups first, then the SLOW files, then the folder groups (most files first), then the
 * files left. With `share` false, one process per file (PD_TEST_SHARE=0: to tell whether a
 * failure comes from a file before it in its group).
 */
export function processes(files, share = true) {
  if (!share) return slowFirst(files).map((f) => [f]);
  const left = new Set(files);
  const take = (list) => list.filter((f) => left.delete(f));
  const modelGroups = MODEL_GROUPS.map(take).filter((g) => g.length);
  const solo = slowFirst(files.filter((f) => left.has(f) && (matches(f, SLOW) || matches(f, OWN_PROCESS))));
  take(solo);
  const byFolder = new Map();
  for (const f of [...left].sort()) {
    const folder = f.slice(0, f.lastIndexOf("/"));
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), f]);
  }
  const groups = [];
  for (const folderFiles of byFolder.values()) {
    // Even chunks: 7 files make groups of 4 and 3, not 6 and 1.
    const chunks = Math.ceil(folderFiles.length / GROUP_FILES);
    const size = Math.ceil(folderFiles.length / chunks);
    for (let i = 0; i < folderFiles.length; i += size) groups.push(folderFiles.slice(i, i + size));
  }
  groups.sort((a, b) => b.length - a.length);
  return [...modelGroups, ...solo.map((f) => [f]), ...groups];
}
