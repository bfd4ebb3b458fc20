// The default codec set: which library handles which input, chosen by measurement
// (see bench/imaging-codecs.ts and the notes in each codec file).
import type { Codecs } from "./codec-types.ts";
import { libWebpDecoder } from "./codec-squoosh.ts";
import { jpegTurboDecoder } from "./codec-jpeg-turbo.ts";
import { imagescriptCmykJpegDecoder, imagescriptPngDecoder } from "./codec-imagescript.ts";

export type { Codecs, CodecOutcome } from "./codec-types.ts";

/**
 * Builds a codec set. WASM files are read and compiled on first use and kept by the
 * returned object; create one per worker thread (or use the default of decodeImage
 * which does exactly that).
 */
export function createCodecs(): Codecs {
  const decodeJpeg = jpegTurboDecoder();
  const decodeWebp = libWebpDecoder();
  return {
    decodeJpeg,
    decodeCmykJpeg: imagescriptCmykJpegDecoder(),
    decodePng: imagescriptPngDecoder(),
    decodeWebp,
    release() {
      decodeJpeg.release();
      decodeWebp.release();
    },
  };
}

let threadDefault: Codecs | undefined;

/**
 * The codec set used when a caller passes none. A per-thread cache of compiled WASM,
 * not shared state: it holds no request data and behaves the same for every caller.
 */
export function defaultCodecs(): Codecs {
  return (threadDefault ??= createCodecs());
}

/** Drops what this thread's default codec set keeps between calls (Codecs.release). */
export function releaseDefaultCodecs(): void {
  threadDefault?.release?.();
}
