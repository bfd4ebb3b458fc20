// First module of every pool worker: imports the real entry (workerData.entry). A
// TypeScript entry (the development loop and the tests run src/ directly) needs a loader
// in this thread. A preload that registers module hooks, such as the test command's
// scripts/ts-hooks/register.mjs, runs again in each worker and reaches it; tsx's
// `--import tsx` does not ("Unknown file extension .ts", github.com/privatenumber/tsx/issues/354),
// so then tsx is registered here. The module map remembers a failed import, so the probe
// is a file of its own, never the entry. Deno runs TypeScript natively.
import { workerData } from "node:worker_threads";

const entry = workerData?.entry;
if (typeof entry !== "string") throw new Error("worker-bootstrap: workerData.entry must be the entry module URL");
if (/\.[cm]?tsx?$/.test(new URL(entry).pathname) && !("Deno" in globalThis)) {
  const loads = await import("./ts-probe.ts").then(
    () => true,
    (err) => {
      if (err?.code === "ERR_UNKNOWN_FILE_EXTENSION") return false;
      throw err;
    },
  );
  if (!loads) {
    const { register } = await import("tsx/esm/api");
    register();
  }
}
await import(entry);
