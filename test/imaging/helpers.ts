// Shared helpers for the imaging tests: fixture loading, colour statistics, tiny
// hand-built PNGs and a codec set that records whether it was used.
import { readFileSync } from "node:fs";
import { deflateSync, crc32 } from "node:zlib";
import type { Codecs, CodecOutcome } from "../../src/engine/imaging/codecs.ts";
import type { RGBA } from "../../src/engine/imaging/types.ts";

const FIXTURES = new URL("../fixtures/", import.meta.url);

export function fixture(path: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(path, FIXTURES)));
}

/** Mean R, G, B, A over all pixels, or only over pixels where `where(i)` holds. */
export function meanColour(img: RGBA, where?: (pixel: number) => boolean): [number, number, number, number] {
  const s = [0, 0, 0, 0];
  let n = 0;
  for (let p = 0; p < img.width * img.height; p++) {
    if (where && !where(p)) continue;
    for (let c = 0; c < 4; c++) s[c] += img.data[p * 4 + c];
    n++;
  }
  return [s[0] / n, s[1] / n, s[2] / n, s[3] / n];
}

export function assertClose(actual: number, expected: number, tolerance: number, what: string): void {
  if (!(Math.abs(actual - expected) <= tolerance)) {
    throw new Error(`${what}: ${actual.toFixed(2)} is not within ${tolerance} of ${expected.toFixed(2)}`);
  }
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number, depth: number, colourType: number): Buffer {
  const d = Buffer.alloc(13);
  d.writeUInt32BE(width, 0);
  d.writeUInt32BE(height, 4);
  d[8] = depth;
  d[9] = colourType;
  return chunk("IHDR", d);
}

/** A valid 8-bit grey PNG of the given size, every pixel `value`. */
export function greyPng(width: number, height: number, value = 0, extraChunks: Buffer[] = []): Uint8Array {
  const row = Buffer.alloc(1 + width, value);
  row[0] = 0; // filter: none
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  return new Uint8Array(
    Buffer.concat([SIGNATURE, ihdr(width, height, 8, 0), ...extraChunks, chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]),
  );
}

/** Only the signature and IHDR (plus optional chunks and a token IDAT): a header without real pixels. */
export function pngHeaderOnly(width: number, height: number, extraChunks: Buffer[] = []): Uint8Array {
  return new Uint8Array(Buffer.concat([SIGNATURE, ihdr(width, height, 8, 2), ...extraChunks, chunk("IDAT", new Uint8Array(8))]));
}

export { chunk as pngChunk };

/** A TIFF block with only IFD0/Orientation, in either byte order. */
export function tiffOrientation(orientation: number, littleEndian: boolean): Buffer {
  const b = Buffer.alloc(26);
  const u16 = (v: number, at: number) => (littleEndian ? b.writeUInt16LE(v, at) : b.writeUInt16BE(v, at));
  const u32 = (v: number, at: number) => (littleEndian ? b.writeUInt32LE(v, at) : b.writeUInt32BE(v, at));
  b.write(littleEndian ? "II" : "MM", 0, "latin1");
  u16(42, 2);
  u32(8, 4);
  u16(1, 8);
  u16(0x0112, 10);
  u16(3, 12);
  u32(1, 14);
  u16(orientation, 18);
  return b;
}

/** Codecs that count calls and fail every decode: proves a path never reached a decoder. */
export function spyCodecs(): Codecs & { calls: string[] } {
  const calls: string[] = [];
  const refuse = (name: string) => async (): Promise<CodecOutcome> => {
    calls.push(name);
    return { ok: false, reason: "spy" };
  };
  return {
    calls,
    decodeJpeg: refuse("jpeg"),
    decodeCmykJpeg: refuse("cmyk"),
    decodePng: refuse("png"),
    decodeWebp: refuse("webp"),
  };
}

/** Deterministic pseudo-random numbers (mulberry32) so failures can be reproduced. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
