// The worker side of the pool: a worker entry calls serveWorker once with its handler.
// init runs once (create the session) and its result is reported as the worker's
// info; handle runs one job at a time (the pool never sends a second job before the first
// is answered); idle runs after an answer that left the pool with no job for this worker;
// dispose runs when the pool closes.
import { parentPort, workerData } from "node:worker_threads";
import { packViews, unpackViews } from "./thread-views.ts";
import { toWireError, type FromWorker, type ToWorker, type TransferList, type WorkerEnvelope } from "./worker-protocol.ts";

export interface WorkerHandler<Data, Job, Out, Info = unknown> {
  init(data: Data): Promise<Info>;
  handle(job: Job): Promise<{ result: Out; transfer?: TransferList }>;
  /** After an answer, when the pool has no next job for this worker (it may free what it keeps for one). */
  idle?(): void;
  dispose?(): Promise<void>;
}

export function serveWorker<Data, Job, Out, Info = unknown>(handler: WorkerHandler<Data, Job, Out, Info>): void {
  const port = parentPort;
  if (!port) throw new Error("serveWorker must run inside a worker thread started by createWorkerPool");
  const envelope = workerData as WorkerEnvelope | undefined;
  const post = (msg: FromWorker, transfer?: TransferList) => port.postMessage(msg, transfer ? [...transfer] : []);

  port.on("message", (msg: ToWorker) => {
    if (msg.type === "job") {
      handler
        .handle(unpackViews(msg.job) as Job)
        // A result that cannot be cloned makes postMessage throw: answer with that error.
        .then(({ result, transfer }) => post({ type: "result", id: msg.id, result: packViews(result) }, transfer))
        .catch((err: unknown) => post({ type: "error", id: msg.id, error: toWireError(err) }));
    } else if (msg.type === "idle") {
      handler.idle?.();
    } else if (msg.type === "close") {
      Promise.resolve(handler.dispose?.())
        .catch(() => {}) // closing anyway; the pool terminates the thread next
        .finally(() => {
          post({ type: "closed" });
          // Deno's parentPort has no close(); the pool terminates the worker next anyway.
          if (typeof port.close === "function") port.close();
        });
    }
  });

  handler.init(envelope?.data as Data).then(
    (info) => post({ type: "ready", info }),
    (err: unknown) => post({ type: "init-failed", error: toWireError(err) }),
  );
}
