import { readFileSync } from "node:fs";
import { decodeImage } from "../src/imaging/decode.ts";
import { resizeRGBA } from "../src/imaging/resize.ts";
import { estimateForegroundInPlace } from "../src/imaging/foreground.ts";
const cat = (await decodeImage(new Uint8Array(readFileSync("test/fixtures/photos/chelsea.png")))) as any;
const rocket = (await decodeImage(new Uint8Array(readFileSync("test/fixtures/photos/rocket.jpg")))) as any;
const W = 4000, H = 3000;
const F = resizeRGBA(cat.image, W, H).data; const B = resizeRGBA(rocket.image, W, H).data;
for (const wpx of [8, 32]) {
  const mask = new Uint8Array(W*H); const I = new Uint8ClampedArray(W*H*4);
  for (let y=0;y<H;y++) for (let x=0;x<W;x++) { const p=y*W+x;
    const d = Math.hypot((x-W/2)/1.3, y-H/2) - H/3 + 80*Math.sin(x/50);
    const a = Math.min(1, Math.max(0, 0.5 - d/wpx)); mask[p] = Math.round(a*255); const aa = mask[p]/255;
    for (let c=0;c<3;c++) I[p*4+c] = aa*F[p*4+c] + (1-aa)*B[p*4+c]; I[p*4+3]=255; }
  const out = new Uint8ClampedArray(I);
  const t = performance.now(); estimateForegroundInPlace(out, mask, W, H); const ms = performance.now() - t;
  let eEst = 0, eNaive = 0, wsum = 0;
  for (let p=0;p<W*H;p++){ const m=mask[p]; if (m===0||m===255) continue; const a=m/255; wsum+=a;
    for (let c=0;c<3;c++){ eEst += a*Math.abs(out[p*4+c]-F[p*4+c]); eNaive += a*Math.abs(I[p*4+c]-F[p*4+c]); } }
  console.log(`grid ${process.env.PD_GRID ?? "1e6"} ramp ${wpx}px: err ${(eEst/wsum/3).toFixed(2)} naive ${(eNaive/wsum/3).toFixed(2)} time ${ms.toFixed(0)}ms`);
}
