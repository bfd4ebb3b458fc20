// Entry of a band helper thread (pipeline-bands.ts): takes pieces of each run its pool
// worker announces, in the memory they share, and answers once none is left.
import { parentPort } from "node:worker_threads";
import { runPieces } from "../imaging/row-bands.ts";
import { unpackViews } from "../inference/thread-views.ts";
import type { BandMessage, BandReply, CollectMessage } from "./pipeline-bands.ts";
import { exposedGc } from "./release-memory.ts";

const port = parentPort;
if (!port) throw new Error("pipeline-bands-worker must run as a worker thread");

port.on("message", (m: BandMessage | CollectMessage) => {
  if ("collect" in m) return exposedGc()?.();
  let reply: BandReply;
  try {
    runPieces(m.task, unpackViews(m.args) as never, m.pieces, unpackViews(m.next));
    reply = { id: m.id, ok: true };
  } catch (e) {
    reply = { id: m.id, ok: false, message: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies BandReply);
