// Times of the pixel operations on a 12 MP image, the worst case the service accepts:
// orientation, the three resizes, compose (with foreground estimation) and bbox.
// Median of 5 runs after a warm-up. Run: node --import tsx bench/imaging-ops.ts
import { applyOrientation } from "../src/engine/imaging/orient.ts";
import { resizeMask, resizeRGBA, resizeToRGB } from "../src/engine/imaging/resize.ts";
import { composeCutout } from "../src/engine/imaging/compose.ts";
import { foregroundBox } from "../src/engine/imaging/bbox.ts";
import type { RGBA } from "../src/engine/imaging/types.ts";
import { loadNote, medianMs, row } from "./imaging-timing.ts";

const W = 4000, H = 3000;
// A textured image and a subject mask with a soft edge about 8 px wide, roughly what
// a 1024 px model mask gives once scaled up to 4000 px.
const data = new Uint8ClampedArray(W * H * 4);
const mask = new Uint8Array(W * H);
for (let y = 0; y < H; y++) {
  for (let x = 0; x < W; x++) {
    const p = y * W + x;
    data[p * 4] = (x * 7 + y * 3) & 255;
    data[p * 4 + 1] = (x ^ y) & 255;
    data[p * 4 + 2] = (x * y) & 255;
    data[p * 4 + 3] = 255;
    const d = Math.hypot((x - W / 2) / 1.3, y - H / 2) - H / 3 + 60 * Math.sin(x / 40);
    mask[p] = Math.round(255 * Math.min(1, Math.max(0, 0.5 - d / 8)));
  }
}
const img: RGBA = { width: W, height: H, data };
const modelMask = resizeMask(mask, W, H, 1024, 1024);

console.log(`12 MP (4000 x 3000); ${loadNote()}`);
console.log(row("applyOrientation 6 (rotate 90°)", await medianMs(() => applyOrientation(img, 6))));
console.log(row("resizeToRGB -> 1024 x 1024 (model input)", await medianMs(() => resizeToRGB(img, 1024, 1024))));
console.log(row("resizeRGBA -> 577 x 433 (preview)", await medianMs(() => resizeRGBA(img, 577, 433))));
console.log(row("resizeMask 1024² -> 4000 x 3000", await medianMs(() => resizeMask(modelMask, 1024, 1024, W, H))));
console.log(row("composeCutout, semitransparency on", await medianMs(() => composeCutout(img, mask, { semitransparency: true }))));
console.log(row("composeCutout, semitransparency off", await medianMs(() => composeCutout(img, mask, { semitransparency: false }))));
console.log(row("foregroundBox", await medianMs(() => foregroundBox(mask, W, H))));
