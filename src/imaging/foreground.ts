// Foreground colour estimation for the soft edge of a cut-out. A pixel at the edge
// is a mix I = a*F + (1-a)*B of subject colour F and background colour B; showing I
// with alpha a over a new background keeps a fringe of the old one (the "halo"). We
// want F.
//
// Method: the blur-fusion idea of Forte & Pitié, "Approximate Fast Foreground Colour
// Estimation" (ICIP 2021). Local averages of the subject side and of the background
// side give smooth estimates Fb and Bb; the part of I they do not explain,
// I - a*Fb - (1-a)*Bb, is added back to the foreground in proportion to a:
//     F = Fb + a * (I - a*Fb - (1-a)*Bb)
// First with a wide window (about 91 px) to reach colour from deep inside each
// region, then refined with a narrow one (about 7 px) for local detail.
//
// Our variations: in the wide pass a pixel counts towards the subject average with
// weight a^4 and towards the background with (1-a)^4 instead of a and 1-a, so mixed
// edge pixels barely pollute either average; and the narrow pass is run twice. On a
// synthetic white disc on green, this took the mean leftover green (G minus the mean
// of R and B, pixels with a ≥ 0.1) from 6.3 to 1.2 for a 10 px soft edge and from 31
// to 9 for a 40 px one; wide edges are what a 1024 px model mask becomes at 12 MP.
//
// Cost control: the averages are smooth, so they are computed on a grid of k x k
// cells (k keeps the grid at or under 0.25 MP; exact for smaller images) and read back
// bilinearly; only the final per-pixel step runs at full resolution, and only on
// pixels with 0 < alpha < 255. Linear in the pixel count.
import { boxBlur } from "./box-blur.ts";

const WIDE_RADIUS = 45;
const NARROW_RADIUS = 3;
const NARROW_PASSES = 2;
const GRID_TARGET_PIXELS = 250_000;
/** Guards divisions where one side has (almost) no weight; its estimate is then unused. */
const EPS = 1e-4;

type RGBPlanes = [Float32Array, Float32Array, Float32Array];

/**
 * Replaces the RGB of every soft-edge pixel (0 < mask < 255) of `rgba` in place with
 * its estimated foreground colour. Other pixels are left as they are.
 */
export function estimateForegroundInPlace(
  rgba: Uint8ClampedArray,
  mask: Uint8Array,
  width: number,
  height: number,
  gridTargetPixels: number = GRID_TARGET_PIXELS, // tests lower it to get coarse grids on small images
): void {
  if (!hasSoftPixels(mask)) return;
  const k = Math.max(1, Math.ceil(Math.sqrt((width * height) / gridTargetPixels)));
  const grid = new Grid(Math.ceil(width / k), Math.ceil(height / k));
  const { A, weightF, weightB, meanI, sumF, sumB } = cellMeans(rgba, mask, width, height, k, grid);
  const n = grid.n;
  const wide = Math.max(1, Math.round(WIDE_RADIUS / k));
  const narrow = Math.max(1, Math.round(NARROW_RADIUS / k));

  // Wide pass with confidence weights. sumF/sumB become the estimates F1 and Bb.
  grid.blur(weightF, wide, weightF);
  grid.blur(weightB, wide, weightB);
  for (let ch = 0; ch < 3; ch++) {
    const f = sumF[ch], b = sumB[ch], img = meanI[ch];
    grid.blur(f, wide, f);
    grid.blur(b, wide, b);
    for (let c = 0; c < n; c++) {
      const a = A[c];
      const fb = f[c] / Math.max(weightF[c], EPS);
      const bb = b[c] / Math.max(weightB[c], EPS);
      f[c] = clamp255(fb + a * (img[c] - a * fb - (1 - a) * bb));
      b[c] = bb;
    }
  }

  // Narrow passes, weighted by a and 1-a, averaging the current F estimate on the
  // subject side and Bb on the background side. After the last pass sumF/sumB hold
  // the final Fb and Bb; the correction step happens per pixel below.
  const blurA = weightF; // reuse: the wide-pass weights are no longer needed
  grid.blur(A, narrow, blurA);
  const weighted = weightB;
  for (let pass = 0; pass < NARROW_PASSES; pass++) {
    for (let ch = 0; ch < 3; ch++) {
      const f = sumF[ch], b = sumB[ch], img = meanI[ch];
      for (let c = 0; c < n; c++) weighted[c] = f[c] * A[c];
      grid.blur(weighted, narrow, f);
      for (let c = 0; c < n; c++) weighted[c] = b[c] * (1 - A[c]);
      grid.blur(weighted, narrow, b);
      for (let c = 0; c < n; c++) {
        f[c] /= Math.max(blurA[c], EPS);
        b[c] /= Math.max(1 - blurA[c], EPS);
      }
      if (pass === NARROW_PASSES - 1) continue;
      for (let c = 0; c < n; c++) {
        const a = A[c];
        f[c] = clamp255(f[c] + a * (img[c] - a * f[c] - (1 - a) * b[c]));
      }
    }
  }
  correctSoftPixels(rgba, mask, width, height, k, grid, sumF, sumB);
}

function hasSoftPixels(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0 && mask[i] !== 255) return true;
  return false;
}

class Grid {
  readonly n: number;
  private readonly tmp: Float32Array;
  constructor(readonly w: number, readonly h: number) {
    this.n = w * h;
    this.tmp = new Float32Array(this.n);
  }
  plane(): Float32Array {
    return new Float32Array(this.n);
  }
  blur(src: Float32Array, radius: number, out: Float32Array): void {
    boxBlur(src, this.w, this.h, radius, this.tmp, out);
  }
}

/**
 * Per cell: mean a, mean a^4, mean (1-a)^4, mean I, mean a^4*I and mean (1-a)^4*I.
 * Cells of 4 x 4 pixels or more are sampled on every other row and column: the means
 * only feed wide blurs, and this halves the one full-resolution pass that dominates
 * the cost at 12 MP.
 */
function cellMeans(rgba: Uint8ClampedArray, mask: Uint8Array, width: number, height: number, k: number, grid: Grid) {
  const step = k >= 4 ? 2 : 1;
  const A = grid.plane(), weightF = grid.plane(), weightB = grid.plane();
  const meanI: RGBPlanes = [grid.plane(), grid.plane(), grid.plane()];
  const sumF: RGBPlanes = [grid.plane(), grid.plane(), grid.plane()];
  const sumB: RGBPlanes = [grid.plane(), grid.plane(), grid.plane()];
  const [iR, iG, iB] = meanI, [fR, fG, fB] = sumF, [bR, bG, bB] = sumB;
  // One cell at a time, summing in locals: each cell's planes are written once.
  for (let cy = 0, c = 0; cy < grid.h; cy++) {
    const y1 = Math.min(height, (cy + 1) * k);
    for (let cx = 0; cx < grid.w; cx++, c++) {
      const x0 = cx * k, x1 = Math.min(width, x0 + k);
      let sa = 0, swf = 0, swb = 0, sr = 0, sg = 0, sb = 0;
      let fr = 0, fg = 0, fb = 0, br = 0, bg = 0, bb = 0;
      for (let y = cy * k; y < y1; y += step) {
        const end = y * width + x1;
        for (let p = y * width + x0; p < end; p += step) {
          const m = mask[p];
          const r = rgba[p * 4], g = rgba[p * 4 + 1], b = rgba[p * 4 + 2];
          sr += r; sg += g; sb += b;
          // Most pixels are plainly background or subject: skip the arithmetic.
          if (m === 0) {
            swb += 1; br += r; bg += g; bb += b;
            continue;
          }
          if (m === 255) {
            sa += 1; swf += 1; fr += r; fg += g; fb += b;
            continue;
          }
          const a = m / 255;
          const a2 = a * a, na = 1 - a, na2 = na * na;
          const wf = a2 * a2, wb = na2 * na2;
          sa += a; swf += wf; swb += wb;
          fr += wf * r; fg += wf * g; fb += wf * b;
          br += wb * r; bg += wb * g; bb += wb * b;
        }
      }
      A[c] = sa; weightF[c] = swf; weightB[c] = swb;
      iR[c] = sr; iG[c] = sg; iB[c] = sb;
      fR[c] = fr; fG[c] = fg; fB[c] = fb;
      bR[c] = br; bG[c] = bg; bB[c] = bb;
    }
  }
  // How many samples a cell's run [from, to) gave: from, from + step, ...
  const samples = (from: number, to: number) => Math.ceil((to - from) / step);
  const all = [A, weightF, weightB, ...meanI, ...sumF, ...sumB];
  for (let cy = 0; cy < grid.h; cy++) {
    const rows = samples(cy * k, Math.min(height, (cy + 1) * k));
    for (let cx = 0; cx < grid.w; cx++) {
      // Cells on the right and bottom edges may be cut short by the image border.
      const inv = 1 / (rows * samples(cx * k, Math.min(width, (cx + 1) * k)));
      const c = cy * grid.w + cx;
      for (const p of all) p[c] *= inv;
    }
  }
  return { A, weightF, weightB, meanI, sumF, sumB };
}

/** F = Fb + a(I - a*Fb - (1-a)*Bb) per soft pixel, Fb and Bb bilinear between cell centres. */
function correctSoftPixels(
  rgba: Uint8ClampedArray,
  mask: Uint8Array,
  width: number,
  height: number,
  k: number,
  grid: Grid,
  F: RGBPlanes,
  B: RGBPlanes,
): void {
  const { w: gw, h: gh } = grid;
  // Where each column falls between cell centres depends on x alone: worked out once per
  // column here rather than once per soft pixel (at 12 MP, up to a million of them).
  const gx0s = new Int32Array(width), gx1s = new Int32Array(width), txs = new Float64Array(width);
  for (let x = 0; x < width; x++) {
    const gxf = Math.min(gw - 1, Math.max(0, (x + 0.5) / k - 0.5));
    gx0s[x] = Math.floor(gxf);
    gx1s[x] = Math.min(gw - 1, gx0s[x] + 1);
    txs[x] = gxf - gx0s[x];
  }
  const [fR, fG, fB] = F, [bR, bG, bB] = B;
  for (let y = 0; y < height; y++) {
    const gyf = Math.min(gh - 1, Math.max(0, (y + 0.5) / k - 0.5));
    const gy0 = Math.floor(gyf);
    const gy1 = Math.min(gh - 1, gy0 + 1);
    const ty = gyf - gy0;
    for (let x = 0, p = y * width; x < width; x++, p++) {
      const m = mask[p];
      if (m === 0 || m === 255) continue;
      const gx0 = gx0s[x], gx1 = gx1s[x], tx = txs[x];
      const c00 = gy0 * gw + gx0, c01 = gy0 * gw + gx1, c10 = gy1 * gw + gx0, c11 = gy1 * gw + gx1;
      const w00 = (1 - tx) * (1 - ty), w01 = tx * (1 - ty), w10 = (1 - tx) * ty, w11 = tx * ty;
      const a = m / 255;
      const i = p * 4;
      // The three channels written out: a loop over [F, B] pairs kept V8 from keeping them in registers.
      let fb = fR[c00] * w00 + fR[c01] * w01 + fR[c10] * w10 + fR[c11] * w11;
      let bb = bR[c00] * w00 + bR[c01] * w01 + bR[c10] * w10 + bR[c11] * w11;
      rgba[i] = fb + a * (rgba[i] - a * fb - (1 - a) * bb); // the array clamps to 0..255
      fb = fG[c00] * w00 + fG[c01] * w01 + fG[c10] * w10 + fG[c11] * w11;
      bb = bG[c00] * w00 + bG[c01] * w01 + bG[c10] * w10 + bG[c11] * w11;
      rgba[i + 1] = fb + a * (rgba[i + 1] - a * fb - (1 - a) * bb);
      fb = fB[c00] * w00 + fB[c01] * w01 + fB[c10] * w10 + fB[c11] * w11;
      bb = bB[c00] * w00 + bB[c01] * w01 + bB[c10] * w10 + bB[c11] * w11;
      rgba[i + 2] = fb + a * (rgba[i + 2] - a * fb - (1 - a) * bb);
    }
  }
}

function clamp255(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}
