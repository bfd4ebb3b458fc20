// The pieces of the 12 MP path that can be split into bands of rows, by name, so a
// helper thread can run one from a message (row-bands.ts). Each writes only its own
// band's output and reads nothing another band writes in the same step, so any split
// gives the same bytes as one thread doing all rows.
import { correctSoftPixelsRows, cellMeansRows, solveGridChannel, solveGridShared, type ForegroundGrid } from "./foreground.ts";
import { applyMaskAlpha } from "./compose.ts";
import { resizeMaskRows, resizeRGBARows, resizeToRGBRows } from "./resize.ts";
import { deflatePngSegments, type PngSegmentsArgs } from "./png-rgba.ts";
import type { RowRange } from "./resample.ts";
import type { ImagingFailure, RGBA } from "./types.ts";
import { decodeImage, type Sides } from "./decode.ts";

export const BAND_TASKS = {
  /** The model's input (packed RGB) from the upright image. Bands: rows of the input. */
  modelInput(a: { img: RGBA; width: number; height: number; out: Uint8Array; opaque: boolean }, rows: RowRange): void {
    resizeToRGBRows(a.img, a.width, a.height, a.out, a.opaque, rows);
  },

  /** The upright image at a smaller tier's size (RGBA). Bands: rows of the output. */
  resizeImage(a: { img: RGBA; out: RGBA; opaque: boolean }, rows: RowRange): void {
    resizeRGBARows(a.img, a.out.width, a.out.height, a.out.data, a.opaque, rows);
  },

  /**
   * The model's mask at the cut-out's size, then the grid means of the same rows.
   * Bands: pixel rows, split at multiples of the grid's cell side so each band's cells
   * read only mask rows this band made.
   */
  maskAndMeans(
    a: { mask: Uint8Array; mw: number; mh: number; rgba: Uint8ClampedArray; alpha: Uint8Array; width: number; height: number; grid: ForegroundGrid },
    rows: RowRange,
  ): void {
    resizeMaskRows(a.mask, a.mw, a.mh, a.width, a.height, a.alpha, rows);
    cellMeansRows(a.rgba, a.alpha, a.width, a.height, a.grid, rows.y0 / a.grid.k, Math.ceil(rows.y1 / a.grid.k));
  },

  /** The grid's three shared planes blurred. "Rows": the items 0..2 of solveGridShared. */
  gridShared(a: { grid: ForegroundGrid }, rows: RowRange): void {
    for (let i = rows.y0; i < rows.y1; i++) solveGridShared(a.grid, i);
  },

  /** The grid's estimates, channel by channel. "Rows": the colour channels 0..2. */
  gridChannels(a: { grid: ForegroundGrid }, rows: RowRange): void {
    for (let ch = rows.y0; ch < rows.y1; ch++) solveGridChannel(a.grid, ch);
  },

  /** Edge colours from the solved grid, then the final alpha. Bands: pixel rows. */
  correctAndAlpha(
    a: { rgba: Uint8ClampedArray; alpha: Uint8Array; width: number; height: number; grid: ForegroundGrid; hard: boolean },
    rows: RowRange,
  ): void {
    correctSoftPixelsRows(a.rgba, a.alpha, a.width, a.height, a.grid, rows);
    applyMaskAlpha(a.rgba, a.alpha, a.hard, rows.y0 * a.width, rows.y1 * a.width);
  },

  /** The cut-out's PNG, segment by segment (png-rgba.ts). "Rows": the segments, in the order threads take them. */
  pngSegments(a: PngSegmentsArgs, rows: RowRange): void {
    deflatePngSegments(a, rows);
  },
} as const;

export type BandTaskName = keyof typeof BAND_TASKS;
export type BandTaskArgs<T extends BandTaskName> = Parameters<(typeof BAND_TASKS)[T]>[0];

/** What a decode beside the pipeline's thread reports: the pixels themselves stay in the memory it was given. */
export type DecodeSummary = { ok: true; width: number; height: number } | ImagingFailure;

/**
 * Whole tasks a helper thread runs while the pipeline's own thread goes on (RowBands.beside):
 * work that cannot be cut into rows but need not wait, such as the full-size decode while
 * the model runs. Each returns a plain value that can be posted between threads.
 */
export const BESIDE_TASKS = {
  /**
   * decodeImage (at `atLeast`'s scale, decode.ts) with the pixels in `out` (exactly their
   * bytes, in memory both threads share). A decoder that does not write into given memory
   * fails the task.
   */
  async decode(a: { bytes: Uint8Array; out: Uint8Array; atLeast?: Sides }): Promise<DecodeSummary> {
    const decoded = await decodeImage(a.bytes, {
      atLeast: a.atLeast,
      into: (n) => {
        if (n !== a.out.length) throw new RangeError(`decode beside: ${n} bytes of pixels for ${a.out.length} given`);
        return a.out;
      },
    });
    if (!decoded.ok) return decoded;
    if (decoded.image.data.buffer !== a.out.buffer) throw new Error("decode beside: the decoder did not write into the given memory");
    return { ok: true, width: decoded.image.width, height: decoded.image.height };
  },
} as const;

export type BesideTaskName = keyof typeof BESIDE_TASKS;
export type BesideTaskArgs<T extends BesideTaskName> = Parameters<(typeof BESIDE_TASKS)[T]>[0];
export type BesideResult<T extends BesideTaskName> = Awaited<ReturnType<(typeof BESIDE_TASKS)[T]>>;
