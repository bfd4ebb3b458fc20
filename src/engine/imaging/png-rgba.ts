// The cut-out as an 8-bit RGBA PNG, written by us over node:zlib so that threads can
// deflate parts of it at once (row-bands.ts). The rows are cut into PNG_SEGMENTS
// segments, always the same ones whatever the thread count, so the file is the same
// bytes on one thread or four. Each segment is filtered ("Up" on every row) and
// deflated on its own, ending in a sync flush so the pieces join into one deflate
// stream; each becomes its own IDAT chunk (PNG reads the zlib stream across all IDATs).
// The file: signature, IHDR, an IDAT with the zlib header, the segments' IDATs, an IDAT
// with the final empty block and the Adler-32 of the whole (combined from the
// segments'), IEND.
//
// Why not the Squoosh encoder we used before: one WASM call on one thread, about 100 ms
// at 12 MP. Up + run-length deflate at level 1 made files 0.79-1.00 x its size on our
// test images (docs/BENCHMARKS.md); on one thread it takes about 1.4 x as long, but it
// splits over threads (77-98 ms at 12 MP with a pool worker's helper).
import { constants, deflateRawSync } from "node:zlib";
import { ADLER_BASE, adler32Combine, chunk, chunkSize, headerData, PNG_SIGNATURE, writeChunk } from "./png-chunks.ts";
import { concatBytes } from "./bytes.ts";
import type { RowBands } from "./row-bands.ts";
import type { RowRange } from "./resample.ts";
import type { RGBA } from "./types.ts";
import { LITTLE_ENDIAN } from "./resample-fast.ts";

/** Segments the rows are cut into (fixed, so the bytes do not depend on the threads). */
export const PNG_SEGMENTS = 16;

/**
 * The order threads take segments in (one at a time, row-bands.ts): the top and the bottom
 * of the picture alternate, so the last segments taken are rarely all of the subject
 * (empty background deflates several times faster).
 */
const SEGMENT_ORDER = Array.from({ length: PNG_SEGMENTS }, (_, k) => (k < PNG_SEGMENTS / 2 ? 2 * k : 2 * k - PNG_SEGMENTS + 1));

const DEFLATE_CHUNK = 1 << 20;
const ZLIB_HEADER = Uint8Array.of(0x78, 0x01); // deflate, 32 KB window, fastest
const FINAL_EMPTY_BLOCK = Uint8Array.of(0x03, 0x00); // last block, fixed codes, end of block at once

export interface PngSegmentsArgs {
  img: RGBA;
  /** Each segment's IDAT chunk at its slot (segmentLayout). */
  out: Uint8Array;
  /** Per segment: the chunk's bytes, the Adler-32 of its filtered rows. */
  meta: Uint32Array;
}

interface Segment {
  rows: RowRange;
  /** Filtered bytes: one filter byte and 4 bytes per pixel for each row. */
  filtered: number;
  /** Where its chunk goes in PngSegmentsArgs.out, and the room it has there. */
  slot: number;
  room: number;
}

/** More than deflate can ever make of n bytes (zlib's own bound, plus the sync flush and a margin). */
const deflateRoom = (n: number): number => n + (n >>> 12) + (n >>> 14) + (n >>> 25) + 64;

function segmentLayout(width: number, height: number): { segments: Segment[]; total: number } {
  const segments: Segment[] = [];
  let slot = 0;
  for (let i = 0; i < PNG_SEGMENTS; i++) {
    const rows = { y0: Math.floor((height * i) / PNG_SEGMENTS), y1: Math.floor((height * (i + 1)) / PNG_SEGMENTS) };
    const filtered = (rows.y1 - rows.y0) * (width * 4 + 1);
    const room = chunkSize(deflateRoom(filtered));
    segments.push({ rows, filtered, slot, room });
    slot += room;
  }
  return { segments, total: slot };
}

/** The band task (band-tasks.ts): segments SEGMENT_ORDER[k] for k in the band. */
export function deflatePngSegments(a: PngSegmentsArgs, band: RowRange): void {
  const { segments } = segmentLayout(a.img.width, a.img.height);
  for (let k = band.y0; k < band.y1; k++) {
    const i = SEGMENT_ORDER[k]!;
    const s = segments[i]!;
    if (s.filtered === 0) {
      a.meta[2 * i] = 0;
      a.meta[2 * i + 1] = 1; // Adler-32 of nothing
      continue;
    }
    const filtered = scratch(s.filtered);
    a.meta[2 * i + 1] = filterUp(a.img, s.rows, filtered);
    // chunkSize: zlib's output in one piece where it fits, not in 16 KB pieces joined after.
    const deflated = deflateRawSync(filtered, { level: 1, strategy: constants.Z_RLE, finishFlush: constants.Z_SYNC_FLUSH, chunkSize: DEFLATE_CHUNK });
    if (chunkSize(deflated.length) > s.room) throw new RangeError(`PNG segment ${i}: ${deflated.length} bytes deflated, room for ${s.room}`);
    a.out.set(deflated, s.slot + 8);
    a.meta[2 * i] = writeChunk(a.out, s.slot, "IDAT", deflated.length);
  }
}

// This thread's buffer for one segment's filtered rows, kept for the next image (a new
// one each time would be new pages for the kernel to fault in).
let scratchBuffer = new Uint8Array(0);
function scratch(n: number): Uint8Array {
  if (scratchBuffer.length < n) scratchBuffer = new Uint8Array(n);
  return scratchBuffer.subarray(0, n);
}

const HIGH_BITS = 0x80808080;

/** Words per step of the running Adler-32 sums: small enough that every sum stays exact in a double. */
const ADLER_WORDS = 4096;

/**
 * Filters rows `rows` of img with "Up" (each byte minus the byte above; the first row of
 * the image as it is) into `out`, and returns the Adler-32 of what it wrote. Four bytes
 * at a time: the byte-wise differences of two words without borrows between bytes.
 */
function filterUp(img: RGBA, rows: RowRange, out: Uint8Array): number {
  if (!LITTLE_ENDIAN) throw new Error("the PNG writer assumes a little-endian platform");
  const { width: words, data } = img;
  const pixels = new Uint32Array(data.buffer, data.byteOffset, data.length >> 2); // aligned by encodeRgbaPng
  const row = new Uint32Array(words);
  const rowBytes = new Uint8Array(row.buffer);
  let a = 1, b = 0;
  for (let y = rows.y0, o = 0; y < rows.y1; y++, o += words * 4 + 1) {
    out[o] = 2; // Up
    a += 2;
    b += a;
    const at = y * words, above = (y - 1) * words;
    for (let x0 = 0; x0 < words; x0 += ADLER_WORDS) {
      const x1 = Math.min(words, x0 + ADLER_WORDS);
      // Adler-32 over the step's bytes in file order (low byte first of each word): with
      // s_j a word's byte sum, A grows by the sum of all s_j, and B by n·4·A plus each
      // byte times the bytes from it to the step's end: 4·Σ_j (n − j)·s_j − Σ_j (c1 + 2c2 + 3c3)_j,
      // where Σ_j (n − j)·s_j = S + T, S = Σ s_j and T = Σ_j (the sum of the s before j).
      let sum = 0, prefixes = 0, within = 0;
      for (let x = x0; x < x1; x++) {
        const cur = pixels[at + x]!;
        let d = cur;
        if (y > 0) {
          const up = pixels[above + x]!;
          d = ((cur | HIGH_BITS) - (up & ~HIGH_BITS)) ^ ((cur ^ ~up) & HIGH_BITS);
        }
        row[x] = d;
        prefixes += sum;
        if (d === 0) continue; // four zero bytes: a transparent area, or a row like the one above
        const pairs = (d & 0x00ff00ff) + ((d >>> 8) & 0x00ff00ff);
        sum += (pairs & 0xffff) + (pairs >>> 16);
        within += ((d >>> 8) & 255) + 2 * ((d >>> 16) & 255) + 3 * (d >>> 24);
      }
      b = (b + 4 * (x1 - x0) * a + 4 * (sum + prefixes) - within) % ADLER_BASE;
      a = (a + sum) % ADLER_BASE;
    }
    out.set(rowBytes, o + 1);
  }
  return ((b << 16) | a) >>> 0;
}

/**
 * 8-bit RGBA PNG of img. `bands`: where the segments are deflated; img must be in their
 * shared memory when they run on helper threads.
 */
export async function encodeRgbaPng(img: RGBA, bands: RowBands): Promise<Uint8Array> {
  const { width, height, data } = img;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`encodePng: invalid size ${width} x ${height}`);
  }
  if (data.length !== width * height * 4) throw new RangeError(`encodePng: ${data.length} bytes of pixels for ${width} x ${height} RGBA`);
  // The filter reads 32-bit words: pixels at an odd offset are copied once (bands' memory
  // is aligned), here rather than in every segment.
  if (data.byteOffset % 4 !== 0) {
    const aligned = bands.bytes(data.length);
    aligned.set(data);
    img = { width, height, data: new Uint8ClampedArray(aligned.buffer, aligned.byteOffset, aligned.length) };
  }
  const { segments, total } = segmentLayout(width, height);
  const out = bands.bytes(total);
  const metaBytes = bands.bytes(PNG_SEGMENTS * 8);
  const meta = new Uint32Array(metaBytes.buffer, metaBytes.byteOffset, PNG_SEGMENTS * 2);
  await bands.run("pngSegments", { img, out, meta }, PNG_SEGMENTS);

  let adler = 1;
  for (let i = 0; i < PNG_SEGMENTS; i++) adler = adler32Combine(adler, meta[2 * i + 1]!, segments[i]!.filtered);
  const trailer = new Uint8Array(6);
  trailer.set(FINAL_EMPTY_BLOCK);
  new DataView(trailer.buffer).setUint32(2, adler);
  const parts = [PNG_SIGNATURE, chunk("IHDR", headerData(width, height, 6)), chunk("IDAT", ZLIB_HEADER)];
  for (let i = 0; i < PNG_SEGMENTS; i++) if (meta[2 * i]! > 0) parts.push(out.subarray(segments[i]!.slot, segments[i]!.slot + meta[2 * i]!));
  parts.push(chunk("IDAT", trailer), chunk("IEND", new Uint8Array(0)));
  return concatBytes(...parts);
}
