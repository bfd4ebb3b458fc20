// The pipeline's pixel steps around the model, each cut into row bands (row-bands.ts):
// the model's input from the upright image, and the cut-out from the model's mask
// (mask upscale + grid means, grid solve, edge colours + alpha), and a smaller tier's
// image. With inlineBands this is exactly resizeToRGB, resizeRGBA, resizeMask and
// composeCutoutInPlace, same bytes.
import type { RowBands } from "./row-bands.ts";
import { foregroundGrid } from "./foreground.ts";
import { isOpaque } from "./resample-fast.ts";
import type { ComposeOptions } from "./compose.ts";
import type { RGBA } from "./types.ts";

/**
 * `img` in memory the bands' threads share: itself when every band runs here or it is in
 * shared memory already (decoded into bands.bytes), else a copy.
 */
export function shareImage(img: RGBA, bands: RowBands): RGBA {
  if (bands.parts === 1 || img.data.buffer instanceof SharedArrayBuffer) return img;
  // Copied as Uint8Array to Uint8Array: V8 then copies bytes as a block (about 5 ms at
  // 12 MP against 25 ms from a Uint8ClampedArray, measured).
  const bytes = shareBytes(new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.length), bands);
  return { width: img.width, height: img.height, data: new Uint8ClampedArray(bytes.buffer, bytes.byteOffset, bytes.length) };
}

/** As shareImage, for bytes (the model's mask): a copy in the bands' memory, unless every band runs here. */
export function shareBytes(data: Uint8Array, bands: RowBands): Uint8Array {
  if (bands.parts === 1) return data;
  const bytes = bands.bytes(data.length);
  bytes.set(data);
  return bytes;
}

/**
 * resizeToRGB of a shared image (shareImage), in bands. `opaque`: known to have no
 * transparency (a JPEG's decode), which spares a scan of every pixel.
 */
export async function modelInputInBands(img: RGBA, width: number, height: number, bands: RowBands, opaque = isOpaque(img.data)): Promise<Uint8Array> {
  const out = bands.bytes(width * height * 3);
  await bands.run("modelInput", { img, width, height, out, opaque }, height);
  return out;
}

/** resizeRGBA of a shared image to another size, in bands; the result is shared too. */
export async function resizeImageInBands(img: RGBA, width: number, height: number, bands: RowBands, opaque = isOpaque(img.data)): Promise<RGBA> {
  if (width === img.width && height === img.height) return img;
  const bytes = bands.bytes(width * height * 4);
  const out = { width, height, data: new Uint8ClampedArray(bytes.buffer, bytes.byteOffset, bytes.length) };
  await bands.run("resizeImage", { img, out, opaque }, height);
  return out;
}

/**
 * resizeMask of the model's mw x mh mask to img's size, then composeCutoutInPlace, in
 * bands: `img` (shared) becomes the cut-out; the result is its alpha, in shared memory.
 */
export async function cutoutInBands(img: RGBA, mask: Uint8Array, mw: number, mh: number, opts: ComposeOptions, bands: RowBands): Promise<Uint8Array> {
  const { width, height, data: rgba } = img;
  if (mask.length !== mw * mh) throw new RangeError(`cutoutInBands: ${mask.length} bytes for a ${mw} x ${mh} mask`);
  const alpha = bands.bytes(width * height);
  const grid = foregroundGrid(width, height, (n) => bands.floats(n));
  await bands.run("maskAndMeans", { mask, mw, mh, rgba, alpha, width, height, grid }, height, grid.k);
  // estimateForegroundInPlace skips all of this when no mask value is soft; here the grid
  // is always solved: correcting touches soft pixels only, so the bytes are the same, and
  // nearly every real mask has soft pixels, so a scan to find none would be wasted.
  await bands.run("gridShared", { grid }, 3);
  await bands.run("gridChannels", { grid }, 3);
  await bands.run("correctAndAlpha", { rgba, alpha, width, height, grid, hard: !opts.semitransparency }, height);
  return alpha;
}
