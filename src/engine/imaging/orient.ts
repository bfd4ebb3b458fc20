// Makes stored pixels upright according to the EXIF orientation tag. Decoders give us
// the pixels as stored; the tag says how a viewer must turn or mirror them.
import type { Orientation, RGBA } from "./types.ts";

/**
 * For each orientation, where display pixel (x, y) comes from in the stored image,
 * as a linear pixel index: base + x * dx + y * dy (W, H = stored width and height).
 *   1 as stored            5 transpose (mirror across the main diagonal)
 *   2 mirror left-right    6 rotate 90° clockwise
 *   3 rotate 180°          7 transverse (mirror across the other diagonal)
 *   4 mirror top-bottom    8 rotate 90° anticlockwise
 */
function walk(o: Orientation, W: number, H: number): { base: number; dx: number; dy: number } {
  switch (o) {
    case 1: return { base: 0, dx: 1, dy: W };
    case 2: return { base: W - 1, dx: -1, dy: W };
    case 3: return { base: H * W - 1, dx: -1, dy: -W };
    case 4: return { base: (H - 1) * W, dx: 1, dy: -W };
    case 5: return { base: 0, dx: W, dy: 1 };
    case 6: return { base: (H - 1) * W, dx: -W, dy: 1 };
    case 7: return { base: H * W - 1, dx: -W, dy: -1 };
    case 8: return { base: W - 1, dx: W, dy: -1 };
  }
}

/** Returns the upright image. Orientation 1 returns the input itself, not a copy. */
export function applyOrientation(img: RGBA, orientation: Orientation): RGBA {
  if (orientation === 1) return img;
  const { width: W, height: H } = img;
  const swap = orientation >= 5;
  const outW = swap ? H : W;
  const outH = swap ? W : H;
  // Move whole pixels as 32-bit words; byte order does not matter for a copy.
  const src = wordsOf(img.data);
  const out = new Uint8ClampedArray(W * H * 4);
  const dst = new Uint32Array(out.buffer);
  const { base, dx, dy } = walk(orientation, W, H);
  let o = 0;
  for (let y = 0; y < outH; y++) {
    let s = base + y * dy;
    for (let x = 0; x < outW; x++, s += dx) dst[o++] = src[s];
  }
  return { width: outW, height: outH, data: out };
}

function wordsOf(data: Uint8ClampedArray): Uint32Array {
  if (data.byteOffset % 4 === 0) return new Uint32Array(data.buffer, data.byteOffset, data.length >> 2);
  return new Uint32Array(data.slice().buffer); // unaligned view: copy once
}
