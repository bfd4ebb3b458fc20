// Mean filter over a (2r+1) x (2r+1) window with running sums: linear time whatever
// the radius. Near the borders the mean is over the part of the window inside the
// image, so blurring a constant gives that constant everywhere, and therefore
// blur(1 - a) = 1 - blur(a), which foreground.ts relies on.

/** Blurs `src` (w x h, one channel) into `out` (may be `src`); `tmp` is scratch of the same size. */
export function boxBlur(src: Float32Array, w: number, h: number, r: number, tmp: Float32Array, out: Float32Array): void {
  const invX = windowInverses(w, r);
  const invY = windowInverses(h, r);
  // Horizontal: src -> tmp. The window's three phases (growing at the left edge, full
  // and sliding, shrinking at the right edge) as three loops, so the hot middle one has
  // no edge test; each step does the same additions in the same order as one loop would.
  const grow = Math.min(w, r + 1); // x < grow: nothing leaves on the left yet
  const full = Math.max(grow, w - r - 1); // x >= full: nothing enters on the right any more
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let sum = 0;
    for (let x = 0; x <= Math.min(w - 1, r); x++) sum += src[row + x];
    let x = 0;
    for (; x < grow; x++) {
      tmp[row + x] = sum * invX[x];
      if (x + r + 1 < w) sum += src[row + x + r + 1];
      if (x >= r) sum -= src[row + x - r];
    }
    for (; x < full; x++) {
      tmp[row + x] = sum * invX[x];
      sum += src[row + x + r + 1];
      sum -= src[row + x - r];
    }
    for (; x < w; x++) {
      tmp[row + x] = sum * invX[x];
      if (x + r + 1 < w) sum += src[row + x + r + 1];
      if (x >= r) sum -= src[row + x - r];
    }
  }
  // Vertical: tmp -> out, one running sum per column, walking whole rows for locality.
  const sums = new Float64Array(w);
  for (let y = 0; y <= Math.min(h - 1, r); y++) {
    for (let x = 0, a = y * w; x < w; x++) sums[x] += tmp[a + x];
  }
  for (let y = 0; y < h; y++) {
    const inv = invY[y];
    const row = y * w;
    const enters = y + r + 1 < h, leaves = y >= r;
    if (enters && leaves) {
      // The middle rows in one pass over the sums: (s + entering) - leaving, the same
      // double operations in the same order as the edge rows' separate loops.
      for (let x = 0, a = (y + r + 1) * w, d = (y - r) * w; x < w; x++) {
        const s = sums[x];
        out[row + x] = s * inv;
        sums[x] = s + tmp[a + x] - tmp[d + x];
      }
      continue;
    }
    for (let x = 0; x < w; x++) out[row + x] = sums[x] * inv;
    if (enters) for (let x = 0, a = (y + r + 1) * w; x < w; x++) sums[x] += tmp[a + x];
    if (leaves) for (let x = 0, d = (y - r) * w; x < w; x++) sums[x] -= tmp[d + x];
  }
}

/** 1 / (number of window positions inside 0..n-1) for a window centred at each i. */
function windowInverses(n: number, r: number): Float64Array {
  const inv = new Float64Array(n);
  for (let i = 0; i < n; i++) inv[i] = 1 / (Math.min(n - 1, i + r) - Math.max(0, i - r) + 1);
  return inv;
}
