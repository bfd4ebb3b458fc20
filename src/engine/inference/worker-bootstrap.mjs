// First module of every pool worker. Node 20 does not apply the parent's `--import tsx`
// hooks to a worker's entry module ("Unknown file extension .ts": a known tsx limitation,
// github.com/privatenumber/tsx/issues/354), so a TypeScript entry cannot be the Worker's
// script itself. This plain module registers tsx
// inside the worker, then imports the real entry. Deno runs TypeScript natively.
import { workerData } from "node:worker_threads";

const entry = workerData?.entry;
if (typeof entry !== "string") throw new Error("worker-bootstrap: workerData.entry must be the entry module URL");
if (/\.[cm]?tsx?$/.test(new URL(entry).pathname) && !("Deno" in globalThis)) {
  const { register } = await import("tsx/esm/api");
  register();
}
await import(entry);
