import { composeCutout } from "../src/imaging/compose.ts";
for (const [W, H] of [[800, 600], [4000, 3000]]) {
const data = new Uint8ClampedArray(W * H * 4);
const mask = new Uint8Array(W * H);
const R = H / 3;
for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
  const d = Math.hypot(x - W / 2, y - H / 2) - R;
  const a = Math.min(1, Math.max(0, 0.5 - d / 40));
  const p = y * W + x;
  mask[p] = Math.round(a * 255);
  data[p*4] = a*255; data[p*4+1] = a*255+(1-a)*200; data[p*4+2] = a*255; data[p*4+3]=255;
}
const out = composeCutout({ width: W, height: H, data }, mask, { semitransparency: true });
const byA = new Map();
for (let p = 0; p < W*H; p++) { const m = mask[p]; if (m>0 && m<255) { const g = out.data[p*4+1] - (out.data[p*4]+out.data[p*4+2])/2; const k = m >> 5; byA.set(k, Math.max(byA.get(k) ?? -999, g)); } }
console.log(W, [...byA.entries()].sort((a,b)=>a[0]-b[0]).map(([k,v])=>`${k*32}-${k*32+31}:${v.toFixed(0)}`).join(" "));
}
