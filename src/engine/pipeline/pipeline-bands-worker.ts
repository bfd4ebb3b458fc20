// Entry of a band helper thread (pipeline-bands.ts): takes pieces of each run its pool
// worker announces, in the memory they share, and answers once none is left; or runs one
// beside task whole (the full-size decode while the model runs) and answers with its value.
import { parentPort } from "node:worker_threads";
import { runBeside, runPieces } from "../imaging/row-bands.ts";
import { releaseDefaultCodecs } from "../imaging/codecs.ts";
import { unpackViews } from "../inference/thread-views.ts";
import type { BandMessage, BandReply, BesideMessage, CollectMessage } from "./pipeline-bands.ts";
import { exposedGc } from "./release-memory.ts";

const port = parentPort;
if (!port) throw new Error("pipeline-bands-worker must run as a worker thread");

const failed = (id: number, e: unknown): BandReply => ({ id, ok: false, message: e instanceof Error ? e.message : String(e) });

port.on("message", (m: BandMessage | BesideMessage | CollectMessage) => {
  if ("collect" in m) {
    if (m.release) releaseDefaultCodecs();
    return exposedGc()?.();
  }
  if ("beside" in m) {
    // Asynchronous (a decoder compiles on first use). No band message comes meanwhile: the
    // worker leaves a helper out of its runs until its beside task has answered.
    runBeside(m.beside, unpackViews(m.args) as never).then(
      (value) => port.postMessage({ id: m.id, ok: true, value } satisfies BandReply),
      (e: unknown) => port.postMessage(failed(m.id, e)),
    );
    return;
  }
  let reply: BandReply;
  try {
    runPieces(m.task, unpackViews(m.args) as never, m.pieces, unpackViews(m.next));
    reply = { id: m.id, ok: true };
  } catch (e) {
    reply = failed(m.id, e);
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies BandReply);
