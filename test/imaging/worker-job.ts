// Runs inside a worker thread for worker.test.ts: the whole imaging path on one file.
import { parentPort, workerData } from "node:worker_threads";
import {
  applyOrientation,
  composeCutout,
  decodeImage,
  encodePng,
  foregroundBox,
  outputSize,
  resizeMask,
  resizeRGBA,
  resizeToRGB,
} from "../../src/engine/imaging/index.ts";

const bytes = new Uint8Array(workerData as ArrayBuffer);
const decoded = await decodeImage(bytes);
if (!decoded.ok) {
  parentPort!.postMessage({ ok: false, title: decoded.title });
} else {
  const upright = applyOrientation(decoded.image, decoded.header.orientation);
  const modelInput = resizeToRGB(upright, 64, 64);
  // A stand-in "model": everything brighter than mid-grey is subject.
  const mask = new Uint8Array(64 * 64);
  for (let i = 0; i < mask.length; i++) mask[i] = modelInput[i * 3] > 128 ? 255 : 0;
  const size = outputSize(upright.width, upright.height, "preview");
  const base = resizeRGBA(upright, size.width, size.height);
  const alpha = resizeMask(mask, 64, 64, size.width, size.height);
  const cutout = composeCutout(base, alpha, { semitransparency: true });
  const png = await encodePng(cutout);
  parentPort!.postMessage({ ok: true, width: cutout.width, height: cutout.height, png, box: foregroundBox(alpha, size.width, size.height) });
}
