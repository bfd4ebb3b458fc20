import { composeCutout } from "../src/imaging/compose.ts";
import { resizeRGBA, resizeMask, resizeToRGB } from "../src/imaging/resize.ts";
import { applyOrientation } from "../src/imaging/orient.ts";
const W = 4000, H = 3000;
const data = new Uint8ClampedArray(W * H * 4);
const mask = new Uint8Array(W * H);
for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
  const d = Math.hypot(x - W / 2, y - H / 2) - 1000; // soft circle edge of 40 px
  const a = Math.min(1, Math.max(0, 0.5 - d / 40));
  const p = y * W + x;
  mask[p] = Math.round(a * 255);
  data[p*4] = a*255 + (1-a)*0; data[p*4+1] = a*255+(1-a)*200; data[p*4+2] = a*255; data[p*4+3]=255;
}
const img = { width: W, height: H, data };
for (let i = 0; i < 3; i++) {
  let t = performance.now(); const out = composeCutout(img, mask, { semitransparency: true }); const tc = performance.now() - t;
  t = performance.now(); resizeToRGB(img, 1024, 1024); const tr = performance.now() - t;
  t = performance.now(); resizeRGBA(img, 577, 433); const tr2 = performance.now() - t;
  const m = new Uint8Array(1024*1024); t = performance.now(); resizeMask(m, 1024, 1024, W, H); const tm = performance.now() - t;
  t = performance.now(); applyOrientation(img, 6); const to = performance.now() - t;
  let worst = 0; for (let p = 0; p < W*H; p++) { if (mask[p] > 25 && mask[p] < 255) { const g = out.data[p*4+1] - (out.data[p*4]+out.data[p*4+2])/2; worst = Math.max(worst, g); } }
  console.log(`compose ${tc.toFixed(0)}ms toRGB1024 ${tr.toFixed(0)} toPreview ${tr2.toFixed(0)} maskUp ${tm.toFixed(0)} orient6 ${to.toFixed(0)} worstGreenExcess ${worst.toFixed(1)}`);
}
