// Resizing for the pipeline: the image to the output size, the image to the model's
// input (packed RGB), and the model's mask back to the output size. The filtering
// itself (area average when shrinking, bilinear when growing) is in resample.ts; the
// faster kernels for opaque images and growing masks, same bytes out, in resample-fast.ts.
import type { RGBA } from "./types.ts";
import { resampleRows, type RowRange } from "./resample.ts";
import { growMaskRows, isOpaque, resampleOpaqueRows } from "./resample-fast.ts";

function checkSize(fn: string, width: number, height: number): void {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`${fn}: invalid target size ${width} x ${height}`);
  }
}

/**
 * RGBA to width x height. Colour is filtered premultiplied by alpha when the image
 * has transparency. Returns the input itself when the size is unchanged.
 */
export function resizeRGBA(img: RGBA, width: number, height: number): RGBA {
  checkSize("resizeRGBA", width, height);
  if (width === img.width && height === img.height) return img;
  const out = new Uint8ClampedArray(width * height * 4);
  resizeRGBARows(img, width, height, out, isOpaque(img.data), { y0: 0, y1: height });
  return { width, height, data: out };
}

/**
 * resizeRGBA's output rows `rows`, into `out` (all width * height * 4 bytes of it).
 * `opaque`: every alpha of `img` is 255, decided once for all bands.
 */
export function resizeRGBARows(img: RGBA, width: number, height: number, out: Uint8ClampedArray, opaque: boolean, rows: RowRange): void {
  if (opaque) {
    // Opaque (every JPEG): alpha stays 255, the colour takes the fast kernel.
    const emit = (row: Float32Array, y: number) => {
      let o = y * width * 4;
      for (let i = 0; i < row.length; i += 3, o += 4) {
        out[o] = row[i]; // Uint8ClampedArray rounds and clamps, as below
        out[o + 1] = row[i + 1];
        out[o + 2] = row[i + 2];
        out[o + 3] = 255;
      }
    };
    resampleOpaqueRows(img, width, height, emit, rows);
    return;
  }
  const emit = (row: Float32Array, y: number) => {
    let o = y * width * 4;
    for (let i = 0; i < row.length; i += 4, o += 4) {
      // Back from premultiplied; fully transparent pixels get colour 0.
      const a = row[i + 3];
      const k = a > 0 ? 255 / a : 0;
      out[o] = row[i] * k;
      out[o + 1] = row[i + 1] * k;
      out[o + 2] = row[i + 2] * k;
      out[o + 3] = a; // Uint8ClampedArray rounds and clamps
    }
  };
  resampleRows({ ...img, channels: 4 }, width, height, true, emit, rows);
}

/**
 * RGBA to packed RGB (3 bytes per pixel) at width x height: the model's input.
 * Transparent areas are shown over black (premultiplied colour), the same rule a
 * viewer uses on a black page, so hidden colour under alpha 0 never reaches the model.
 */
export function resizeToRGB(img: RGBA, width: number, height: number): Uint8Array {
  checkSize("resizeToRGB", width, height);
  const out = new Uint8Array(width * height * 3);
  resizeToRGBRows(img, width, height, out, isOpaque(img.data), { y0: 0, y1: height });
  return out;
}

/**
 * resizeToRGB's output rows `rows`, into `out` (all width * height * 3 bytes of it).
 * `opaque`: every alpha of `img` is 255 (isOpaque), decided once for all bands.
 */
export function resizeToRGBRows(img: RGBA, width: number, height: number, out: Uint8Array, opaque: boolean, rows: RowRange): void {
  if (opaque) {
    resampleOpaqueRows(
      img,
      width,
      height,
      (row, y) => {
        const o = y * width * 3;
        for (let i = 0; i < row.length; i++) out[o + i] = Math.min(255, row[i] + 0.5);
      },
      rows,
    );
    return;
  }
  resampleRows(
    { ...img, channels: 4 },
    width,
    height,
    true,
    (row, y) => {
      let o = y * width * 3;
      for (let i = 0; i < row.length; i += 4, o += 3) {
        // +0.5 then truncation by the Uint8Array store: round to nearest (values are ≥ 0).
        out[o] = Math.min(255, row[i] + 0.5);
        out[o + 1] = Math.min(255, row[i + 1] + 0.5);
        out[o + 2] = Math.min(255, row[i + 2] + 0.5);
      }
    },
    rows,
  );
}

/** A one-channel mask (e.g. the model's output) from mw x mh to width x height. */
export function resizeMask(mask: Uint8Array, mw: number, mh: number, width: number, height: number): Uint8Array {
  checkSize("resizeMask", width, height);
  if (mask.length !== mw * mh) throw new RangeError(`resizeMask: ${mask.length} bytes for a ${mw} x ${mh} mask`);
  if (mw === width && mh === height) return mask.slice();
  const out = new Uint8Array(width * height);
  resizeMaskRows(mask, mw, mh, width, height, out, { y0: 0, y1: height });
  return out;
}

/** resizeMask's output rows `rows`, into `out` (all width * height bytes of it). */
export function resizeMaskRows(mask: Uint8Array, mw: number, mh: number, width: number, height: number, out: Uint8Array, rows: RowRange): void {
  if (width >= mw && height >= mh) return growMaskRows(mask, mw, mh, width, height, out, rows);
  resampleRows(
    { width: mw, height: mh, data: mask, channels: 1 },
    width,
    height,
    false,
    (row, y) => {
      const o = y * width;
      for (let x = 0; x < width; x++) out[o + x] = Math.min(255, row[x] + 0.5);
    },
    rows,
  );
}
