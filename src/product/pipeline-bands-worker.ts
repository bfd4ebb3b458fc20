// Entry of a band helper thread (pipeline-bands.ts): runs the bands its pool worker
// sends, in the memory they share, and answers each one.
import { parentPort } from "node:worker_threads";
import { runBand } from "../imaging/row-bands.ts";
import type { BandMessage, BandReply } from "./pipeline-bands.ts";

const port = parentPort;
if (!port) throw new Error("pipeline-bands-worker must run as a worker thread");

port.on("message", (m: BandMessage) => {
  let reply: BandReply;
  try {
    runBand(m.task, m.args as never, m.rows);
    reply = { id: m.id, ok: true };
  } catch (e) {
    reply = { id: m.id, ok: false, message: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies BandReply);
