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
import type { RowRange } from "./resample.ts";

const WIDE_RADIUS = 45;
const NARROW_RADIUS = 3;
const NARROW_PASSES = 2;
const GRID_TARGET_PIXELS = 250_000;
/** Guards divisions where one side has (almost) no weight; its estimate is then unused. */
const EPS = 1e-4;

type RGBPlanes = [Float32Array, Float32Array, Float32Array];

/**
 * The coarse grid of cells and its planes. The planes are filled band by band
 * (cellMeansRows), solved as a whole (solveGrid), then read band by band
 * (correctSoftPixelsRows); a caller that splits the rows over threads allocates the
 * planes in shared memory through `alloc`.
 */
export interface ForegroundGrid {
  /** Cell side in pixels. */
  k: number;
  w: number;
  h: number;
  /** Per cell: mean a, and the wide pass's weights (blurred in place by solveGrid). */
  A: Float32Array;
  weightF: Float32Array;
  weightB: Float32Array;
  /** A blurred with the narrow radius (solveGrid). */
  blurA: Float32Array;
  meanI: RGBPlanes;
  /** After solveGrid: the foreground estimate Fb per cell. */
  sumF: RGBPlanes;
  /** After solveGrid: the background estimate Bb per cell. */
  sumB: RGBPlanes;
  /**
   * Scratch planes for solveGridShared's item i and solveGridChannel's channel i (two
   * each): from `alloc` like the rest, so a caller that reuses memory job after job
   * (row-bands.ts) does not make six new megabytes the kernel must fault in every time.
   */
  scratch: [Float32Array, Float32Array][];
}

/** The grid for a width x height image, its planes from `alloc` (zeroed or not: every cell is written). */
export function foregroundGrid(
  width: number,
  height: number,
  alloc: (n: number) => Float32Array = (n) => new Float32Array(n),
  gridTargetPixels: number = GRID_TARGET_PIXELS, // tests lower it to get coarse grids on small images
): ForegroundGrid {
  const k = Math.max(1, Math.ceil(Math.sqrt((width * height) / gridTargetPixels)));
  const w = Math.ceil(width / k), h = Math.ceil(height / k);
  const n = w * h;
  const rgb = (): RGBPlanes => [alloc(n), alloc(n), alloc(n)];
  const scratch = [0, 1, 2].map((): [Float32Array, Float32Array] => [alloc(n), alloc(n)]);
  return { k, w, h, A: alloc(n), weightF: alloc(n), weightB: alloc(n), blurA: alloc(n), meanI: rgb(), sumF: rgb(), sumB: rgb(), scratch };
}

/**
 * Replaces the RGB of every soft-edge pixel (0 < mask < 255) of `rgba` in place with
 * its estimated foreground colour. Other pixels are left as they are.
 */
export function estimateForegroundInPlace(
  rgba: Uint8ClampedArray,
  mask: Uint8Array,
  width: number,
  height: number,
  gridTargetPixels: number = GRID_TARGET_PIXELS,
): void {
  if (!hasSoftPixels(mask)) return;
  const grid = foregroundGrid(width, height, undefined, gridTargetPixels);
  cellMeansRows(rgba, mask, width, height, grid, 0, grid.h);
  solveGrid(grid);
  correctSoftPixelsRows(rgba, mask, width, height, grid, { y0: 0, y1: height });
}

/**
 * Blurs and combines the grid's means into the estimates Fb (sumF) and Bb (sumB):
 * first the three shared planes (solveGridShared 0..2), then each colour channel on its
 * own (solveGridChannel 0..2); within each step the items are independent, so they can
 * run on different threads (band-tasks.ts) with the same result.
 */
export function solveGrid(grid: ForegroundGrid): void {
  for (let i = 0; i < 3; i++) solveGridShared(grid, i);
  for (let ch = 0; ch < 3; ch++) solveGridChannel(grid, ch);
}

const wideRadius = (k: number) => Math.max(1, Math.round(WIDE_RADIUS / k));
const narrowRadius = (k: number) => Math.max(1, Math.round(NARROW_RADIUS / k));

/** Item 0 and 1: the wide pass's weights blurred in place; item 2: A blurred into blurA. */
export function solveGridShared(grid: ForegroundGrid, item: number): void {
  const [tmp] = grid.scratch[item]!;
  const { A, weightF, weightB, blurA, k } = grid;
  if (item === 0) boxBlur(weightF, grid.w, grid.h, wideRadius(k), tmp, weightF);
  else if (item === 1) boxBlur(weightB, grid.w, grid.h, wideRadius(k), tmp, weightB);
  else boxBlur(A, grid.w, grid.h, narrowRadius(k), tmp, blurA);
}

/** One colour channel's estimates, once solveGridShared has run for all three items. */
export function solveGridChannel(grid: ForegroundGrid, ch: number): void {
  const { A, weightF, weightB, blurA, k } = grid;
  const n = grid.w * grid.h;
  const [tmp, weighted] = grid.scratch[ch]!;
  const blur = (src: Float32Array, radius: number, out: Float32Array) => boxBlur(src, grid.w, grid.h, radius, tmp, out);
  const wide = wideRadius(k), narrow = narrowRadius(k);
  const f = grid.sumF[ch], b = grid.sumB[ch], img = grid.meanI[ch];

  // Wide pass with confidence weights. f/b become the estimates F1 and Bb.
  blur(f, wide, f);
  blur(b, wide, b);
  for (let c = 0; c < n; c++) {
    const a = A[c];
    const fb = f[c] / Math.max(weightF[c], EPS);
    const bb = b[c] / Math.max(weightB[c], EPS);
    f[c] = clamp255(fb + a * (img[c] - a * fb - (1 - a) * bb));
    b[c] = bb;
  }

  // Narrow passes, weighted by a and 1-a, averaging the current F estimate on the
  // subject side and Bb on the background side. After the last pass f/b hold the final
  // Fb and Bb; the correction step happens per pixel (correctSoftPixelsRows).
  for (let pass = 0; pass < NARROW_PASSES; pass++) {
    for (let c = 0; c < n; c++) weighted[c] = f[c] * A[c];
    blur(weighted, narrow, f);
    for (let c = 0; c < n; c++) weighted[c] = b[c] * (1 - A[c]);
    blur(weighted, narrow, b);
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

function hasSoftPixels(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0 && mask[i] !== 255) return true;
  return false;
}

/**
 * Per cell of the cell rows cy0 ≤ cy < cy1: mean a, mean a^4, mean (1-a)^4, mean I,
 * mean a^4*I and mean (1-a)^4*I. Reads only the pixel rows of those cells. Cells of
 * 4 x 4 pixels or more are sampled on every other row and column: the means only feed
 * wide blurs, and this halves the one full-resolution pass that dominates the cost at
 * 12 MP.
 */
export function cellMeansRows(rgba: Uint8ClampedArray, mask: Uint8Array, width: number, height: number, grid: ForegroundGrid, cy0: number, cy1: number): void {
  const k = grid.k;
  const step = k >= 4 ? 2 : 1;
  const { A, weightF, weightB, meanI, sumF, sumB } = grid;
  const [iR, iG, iB] = meanI, [fR, fG, fB] = sumF, [bR, bG, bB] = sumB;
  // One cell at a time, summing in locals: each cell's planes are written once.
  for (let cy = cy0; cy < cy1; cy++) {
    const y1 = Math.min(height, (cy + 1) * k);
    for (let cx = 0, c = cy * grid.w; cx < grid.w; cx++, c++) {
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
      // Cells on the right and bottom edges may be cut short by the image border:
      // divide by the samples this cell's runs gave (from, from + step, …).
      const inv = 1 / (Math.ceil((y1 - cy * k) / step) * Math.ceil((x1 - x0) / step));
      // The sums pass through float32 before the division, as they always have (same bytes).
      const f32 = Math.fround;
      A[c] = f32(sa) * inv; weightF[c] = f32(swf) * inv; weightB[c] = f32(swb) * inv;
      iR[c] = f32(sr) * inv; iG[c] = f32(sg) * inv; iB[c] = f32(sb) * inv;
      fR[c] = f32(fr) * inv; fG[c] = f32(fg) * inv; fB[c] = f32(fb) * inv;
      bR[c] = f32(br) * inv; bG[c] = f32(bg) * inv; bB[c] = f32(bb) * inv;
    }
  }
}

/**
 * F = Fb + a(I - a*Fb - (1-a)*Bb) per soft pixel of the pixel rows `rows`, Fb and Bb
 * bilinear between cell centres of the solved grid. Each pixel reads only itself and the
 * grid, so bands corrected apart give the same bytes.
 */
export function correctSoftPixelsRows(
  rgba: Uint8ClampedArray,
  mask: Uint8Array,
  width: number,
  height: number,
  grid: ForegroundGrid,
  rows: RowRange,
): void {
  const { w: gw, h: gh, k, sumF: F, sumB: B } = grid;
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
  // The grid between this row's two cell rows, worked out per cell column when a soft
  // pixel first needs it (stamp = the row it was made for): each soft pixel then mixes
  // two columns instead of four cells (soft pixels cluster along the edge, so few
  // columns are made per row). About 5 ms less CPU at 12 MP, measured.
  const planes = [fR, fG, fB, bR, bG, bB];
  const between = new Float64Array(gw * 6);
  const stamp = new Int32Array(gw).fill(-1);
  // Mask values four at a time, to pass over runs of 0 and of 255 (most of an image).
  const quads = mask.byteOffset % 4 === 0 ? new Uint32Array(mask.buffer, mask.byteOffset, mask.length >> 2) : undefined;
  for (let y = rows.y0; y < Math.min(height, rows.y1); y++) {
    const gyf = Math.min(gh - 1, Math.max(0, (y + 0.5) / k - 0.5));
    const gy0 = Math.floor(gyf);
    const gy1 = Math.min(gh - 1, gy0 + 1);
    const ty = gyf - gy0;
    const r0 = gy0 * gw, r1 = gy1 * gw;
    const rowEnd = (y + 1) * width;
    for (let x = 0, p = y * width; x < width; x++, p++) {
      if (quads !== undefined && (p & 3) === 0) {
        let q;
        while (p + 4 <= rowEnd && ((q = quads[p >> 2]) === 0 || q === 0xffffffff)) {
          p += 4;
          x += 4;
        }
        if (x >= width) break;
      }
      const m = mask[p];
      if (m === 0 || m === 255) continue;
      const gx0 = gx0s[x], gx1 = gx1s[x], tx = txs[x], sx = 1 - tx;
      if (stamp[gx0] !== y) {
        stamp[gx0] = y;
        mixColumn(planes, r0 + gx0, r1 + gx0, ty, between, gx0 * 6);
      }
      if (stamp[gx1] !== y) {
        stamp[gx1] = y;
        mixColumn(planes, r0 + gx1, r1 + gx1, ty, between, gx1 * 6);
      }
      const c0 = gx0 * 6, c1 = gx1 * 6;
      const a = m / 255;
      const i = p * 4;
      // The three channels written out: a loop over [F, B] pairs kept V8 from keeping them in registers.
      let fb = between[c0] * sx + between[c1] * tx;
      let bb = between[c0 + 3] * sx + between[c1 + 3] * tx;
      rgba[i] = fb + a * (rgba[i] - a * fb - (1 - a) * bb); // the array clamps to 0..255
      fb = between[c0 + 1] * sx + between[c1 + 1] * tx;
      bb = between[c0 + 4] * sx + between[c1 + 4] * tx;
      rgba[i + 1] = fb + a * (rgba[i + 1] - a * fb - (1 - a) * bb);
      fb = between[c0 + 2] * sx + between[c1 + 2] * tx;
      bb = between[c0 + 5] * sx + between[c1 + 5] * tx;
      rgba[i + 2] = fb + a * (rgba[i + 2] - a * fb - (1 - a) * bb);
    }
  }
}

/** The six planes' values at one cell column, mixed between cell rows c0 and c1 (weight ty on c1), into out[at..at + 6). */
function mixColumn(planes: Float32Array[], c0: number, c1: number, ty: number, out: Float64Array, at: number): void {
  for (let j = 0; j < 6; j++) {
    const plane = planes[j]!;
    out[at + j] = plane[c0] * (1 - ty) + plane[c1] * ty;
  }
}

function clamp255(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}
