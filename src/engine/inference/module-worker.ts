// Every worker thread of ours starts through worker-bootstrap.mjs, which makes a
// TypeScript entry loadable under Node (see there) and then imports the entry named in
// the envelope. The pool's workers and the pipeline's band helpers both start here.
import { Worker } from "node:worker_threads";
import type { TransferList, WorkerEnvelope } from "./worker-protocol.ts";

const BOOTSTRAP = new URL("./worker-bootstrap.mjs", import.meta.url);

/** A worker thread running module `entry`; `data` reaches it as the envelope's data, with `transfer` (ports in it) moved. */
export function startModuleWorker(entry: URL, data?: unknown, transfer?: TransferList): Worker {
  const envelope: WorkerEnvelope = { entry: entry.href, data };
  return new Worker(BOOTSTRAP, { workerData: envelope, ...(transfer?.length ? { transferList: [...transfer] } : {}) });
}
