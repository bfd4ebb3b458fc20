// The bounding box of the visible subject in an alpha mask, in output pixels.

export interface Box {
  top: number;
  left: number;
  width: number;
  height: number;
}

/**
 * Smallest box holding every pixel with alpha ≥ threshold. The default 128 is the
 * same cut that hardens the mask when semitransparency is off, so faint model noise
 * far from the subject does not stretch the box. An empty mask gives all zeros.
 */
export function foregroundBox(alpha: Uint8Array, width: number, height: number, threshold = 128): Box {
  if (alpha.length !== width * height) {
    throw new RangeError(`foregroundBox: ${alpha.length} values for ${width} x ${height}`);
  }
  const cut = Math.max(1, threshold); // alpha 0 is never foreground
  let top = -1;
  let bottom = -1;
  let left = width;
  let right = -1;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let first = -1;
    for (let x = 0; x < width; x++) {
      if (alpha[row + x] >= cut) {
        first = x;
        break;
      }
    }
    if (first < 0) continue;
    if (top < 0) top = y;
    bottom = y;
    if (first < left) left = first;
    // Scan from the right only as far as what is already known to be inside.
    for (let x = width - 1; x > right; x--) {
      if (alpha[row + x] >= cut) {
        right = x;
        break;
      }
    }
  }
  if (top < 0) return { top: 0, left: 0, width: 0, height: 0 };
  return { top, left, width: right - left + 1, height: bottom - top + 1 };
}
