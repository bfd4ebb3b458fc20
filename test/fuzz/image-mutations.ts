// Ways to break a real image file, as fast-check arbitraries. Each mutation starts from
// a fixture the decoders accept and damages one layer of it: the byte stream
// (truncation, bit flips, spliced garbage), the signature (wrong magic), the header
// (huge or zero dimensions), the container (many or deep PNG chunks, WebP chunk sizes
// that lie) or the metadata (garbage EXIF in JPEG APP1, PNG eXIf, WebP EXIF).
// A mutation is plain data plus a label, so a failing case prints what was done.
import fc from "fast-check";
import { crc32 } from "node:zlib";
import { concatBytes } from "../../src/engine/imaging/bytes.ts";

export interface Mutated {
  /** The fixture it started from. */
  source: string;
  /** What was done, short enough for a table row. */
  kind: string;
  bytes: Uint8Array;
}

const be32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset, b.byteLength).setUint32(at, v >>> 0);
const le32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset, b.byteLength).setUint32(at, v >>> 0, true);
const le16 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset, b.byteLength).setUint16(at, v & 0xffff, true);
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** The parts one after another, in a new buffer (the imaging module's own). */
export const concat = concatBytes;

/** A PNG chunk with a correct CRC, so a decoder's CRC check does not end the story early. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  be32(out, 0, data.length);
  out.set(ascii(type), 4);
  out.set(data, 8);
  be32(out, 8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** Offset just after IHDR (8 signature + 25 IHDR chunk bytes). */
const PNG_AFTER_IHDR = 33;

function fixPngIhdrCrc(b: Uint8Array): void {
  if (b.length >= PNG_AFTER_IHDR) be32(b, 29, crc32(b.subarray(12, 29)));
}

/** A TIFF block whose IFD0 has `count` entries; entries are random words. Lies in counts and offsets. */
const garbageTiff = fc
  .record({
    le: fc.boolean(),
    magic: fc.constantFrom(42, 43, 0, 0xffff),
    ifdOffset: fc.oneof(fc.constant(8), fc.integer({ min: 0, max: 0xffffffff })),
    count: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(0xffff)),
    tail: fc.uint8Array({ maxLength: 96 }),
  })
  .map(({ le, magic, ifdOffset, count, tail }) => {
    const head = new Uint8Array(10);
    const v = new DataView(head.buffer);
    head.set(ascii(le ? "II" : "MM"));
    v.setUint16(2, magic, le);
    v.setUint32(4, ifdOffset >>> 0, le);
    v.setUint16(8, count, le);
    return concat(head, tail);
  });

const exifPayload = fc.oneof(garbageTiff, fc.uint8Array({ maxLength: 200 }));

function insertAt(b: Uint8Array, at: number, piece: Uint8Array): Uint8Array {
  return concat(b.subarray(0, at), piece, b.subarray(at));
}

/** JPEG segment: FF marker, 16-bit length (which may lie), payload. */
function jpegSegment(marker: number, payload: Uint8Array, lengthLie?: number): Uint8Array {
  const len = lengthLie ?? Math.min(payload.length + 2, 0xffff);
  return concat(Uint8Array.of(0xff, marker, (len >> 8) & 0xff, len & 0xff), payload.subarray(0, 0xfffd));
}

/** Offset of the first marker segment of `marker` in a JPEG, walking segment lengths. */
function jpegMarkerOffset(b: Uint8Array, wanted: (m: number) => boolean): number {
  let pos = 2;
  while (pos + 4 <= b.length && b[pos] === 0xff) {
    const m = b[pos + 1];
    if (wanted(m)) return pos;
    if (m === 0xda) return -1;
    pos += 2 + ((b[pos + 2] << 8) | b[pos + 3]);
  }
  return -1;
}
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

const hugeSide = fc.oneof(
  fc.constantFrom(0, 1, 3465, 3464, 4000, 16383, 16384, 65535, 0x7fffffff, 0x80000000, 0xffffffff),
  fc.integer({ min: 0, max: 0xffffffff }),
);

type Format = "png" | "jpeg" | "webp";
export function formatOf(b: Uint8Array): Format | "other" {
  if (b[0] === 0x89 && b[1] === 0x50) return "png";
  if (b[0] === 0xff && b[1] === 0xd8) return "jpeg";
  if (b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57) return "webp";
  return "other";
}

/** Huge, zero or odd sizes written into whichever header the format has. */
function withDimensions(b0: Uint8Array, w: number, h: number, fixCrc: boolean): Uint8Array {
  const b = b0.slice();
  switch (formatOf(b)) {
    case "png":
      be32(b, 16, w);
      be32(b, 20, h);
      if (fixCrc) fixPngIhdrCrc(b);
      break;
    case "jpeg": {
      const at = jpegMarkerOffset(b, isSof);
      if (at >= 0) {
        b[at + 5] = (h >> 8) & 0xff;
        b[at + 6] = h & 0xff;
        b[at + 7] = (w >> 8) & 0xff;
        b[at + 8] = w & 0xff;
      }
      break;
    }
    case "webp": {
      const first = String.fromCharCode(...b.subarray(12, 16));
      if (first === "VP8X") {
        for (let i = 0; i < 3; i++) b[24 + i] = ((w - 1) >> (8 * i)) & 0xff;
        for (let i = 0; i < 3; i++) b[27 + i] = ((h - 1) >> (8 * i)) & 0xff;
      } else if (first === "VP8L") {
        const bits = new DataView(b.buffer).getUint32(21, true);
        le32(b, 21, (bits & 0xf0000000) | ((h - 1) & 0x3fff) << 14 | ((w - 1) & 0x3fff));
      } else {
        le16(b, 26, w);
        le16(b, 28, h);
      }
      break;
    }
  }
  return b;
}

/** Many small ancillary chunks, or one chunk whose length field lies, inserted after IHDR. */
const pngChunkStorm = fc.record({
  count: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(5_000, 50_000)),
  type: fc.constantFrom("tEXt", "zTXt", "iTXt", "tRNS", "PLTE", "eXIf", "sBIT", "gAMA", "aBcD", "IDAT", "IEND", "IHDR"),
  size: fc.integer({ min: 0, max: 64 }),
  lengthLie: fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom(0x7fffffff, 0xffffffff, 0x80000000, 1 << 24) },
  ),
});

function withPngChunks(b: Uint8Array, s: { count: number; type: string; size: number; lengthLie?: number }): Uint8Array {
  const one = pngChunk(s.type, new Uint8Array(s.size).fill(0x41));
  if (s.lengthLie !== undefined) be32(one, 0, s.lengthLie);
  const many = new Uint8Array(one.length * s.count);
  for (let i = 0; i < s.count; i++) many.set(one, i * one.length);
  return insertAt(b, PNG_AFTER_IHDR, many);
}

function withExif(b: Uint8Array, payload: Uint8Array, lengthLie: number | undefined): Uint8Array {
  switch (formatOf(b)) {
    case "jpeg":
      return insertAt(b, 2, jpegSegment(0xe1, concat(ascii("Exif\0\0"), payload), lengthLie));
    case "png":
      return insertAt(b, PNG_AFTER_IHDR, pngChunk("eXIf", payload));
    case "webp": {
      // An EXIF chunk after the first one, with the VP8X EXIF flag set when there is a VP8X.
      const c = b.slice();
      if (String.fromCharCode(...c.subarray(12, 16)) === "VP8X") c[20] |= 0x08;
      const chunk = new Uint8Array(8 + payload.length + (payload.length & 1));
      chunk.set(ascii("EXIF"));
      le32(chunk, 4, lengthLie ?? payload.length);
      chunk.set(payload, 8);
      const firstEnd = 20 + new DataView(c.buffer).getUint32(16, true);
      const out = insertAt(c, Math.min(firstEnd + (firstEnd & 1), c.length), chunk);
      le32(out, 4, out.length - 8);
      return out;
    }
    default:
      return b;
  }
}

/** WebP container lies: RIFF size, first chunk size, VP8X flags. */
const webpLie = fc.record({
  field: fc.constantFrom("riff", "first", "flags"),
  value: fc.oneof(fc.constantFrom(0, 1, 2, 0x7fffffff, 0xffffffff, 0xfffffff0), fc.integer({ min: 0, max: 0xffffffff })),
});

function withWebpLie(b0: Uint8Array, lie: { field: string; value: number }): Uint8Array {
  const b = b0.slice();
  if (formatOf(b) !== "webp" || b.length < 21) return b;
  if (lie.field === "riff") le32(b, 4, lie.value);
  else if (lie.field === "first") le32(b, 16, lie.value);
  else b[20] = lie.value & 0xff;
  return b;
}

const MAGICS: Uint8Array[] = [
  Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
  Uint8Array.of(0xff, 0xd8, 0xff, 0xe0),
  concat(ascii("RIFF"), Uint8Array.of(0, 0, 0, 0), ascii("WEBPVP8 ")),
  ascii("GIF89a"),
  ascii("BM"),
  ascii("%PDF-1.7"),
  Uint8Array.of(0, 0, 0, 0x0c, 0x6a, 0x50, 0x20, 0x20), // JPEG 2000
  ascii("<svg "),
];

/**
 * One mutated image. `sources` maps fixture names to bytes; the kinds are weighted so
 * that short runs still hit every layer.
 */
export function mutatedImage(sources: Record<string, Uint8Array>): fc.Arbitrary<Mutated> {
  const names = Object.keys(sources);
  const source = fc.constantFrom(...names);
  const at = (b: Uint8Array, f: number) => Math.floor(f * b.length);
  // Uniform positions: fast-check's default bias favours 0, which would only ever hit the magic.
  const frac = fc.noBias(fc.integer({ min: 0, max: 999_999 })).map((n) => n / 1_000_000);
  const kinds: fc.Arbitrary<Mutated>[] = [
    fc.tuple(source, frac).map(([s, f]) => ({ source: s, kind: "truncate", bytes: sources[s].slice(0, at(sources[s], f)) })),
    fc.tuple(source, fc.array(fc.tuple(frac, fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 16 })).map(([s, flips]) => {
      const b = sources[s].slice();
      for (const [f, bit] of flips) b[at(b, f)] ^= 1 << bit;
      return { source: s, kind: "bit flips", bytes: b };
    }),
    fc.tuple(source, fc.array(fc.tuple(frac, fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 4 })).map(([s, flips]) => {
      // Flips in the first 64 bytes: headers, where a flip changes meaning rather than pixels.
      const b = sources[s].slice();
      for (const [f, bit] of flips) b[Math.floor(f * Math.min(64, b.length))] ^= 1 << bit;
      return { source: s, kind: "header bit flips", bytes: b };
    }),
    fc.tuple(source, frac, fc.uint8Array({ minLength: 1, maxLength: 512 })).map(([s, f, junk]) => {
      const b = sources[s].slice();
      b.set(junk.subarray(0, b.length - at(b, f)), at(b, f));
      return { source: s, kind: "spliced garbage", bytes: b };
    }),
    fc.tuple(source, fc.integer({ min: 0, max: MAGICS.length - 1 })).map(([s, m]) => {
      const b = sources[s].slice();
      b.set(MAGICS[m].subarray(0, b.length));
      return { source: s, kind: "wrong magic", bytes: b };
    }),
    fc.tuple(source, hugeSide, hugeSide, fc.boolean()).map(([s, w, h, crc]) => ({
      source: s,
      // JPEG and WebP fields are narrower than 32 bits, so the label says what was asked for.
      kind: w * h > 12_000_000 ? "declared dimensions (huge)" : "declared dimensions",
      bytes: withDimensions(sources[s], w, h, crc),
    })),
    fc.tuple(source, fc.option(fc.constantFrom(2, 3, 0xffff), { nil: undefined }), exifPayload).map(([s, lie, payload]) => ({
      source: s,
      kind: "garbage EXIF",
      bytes: withExif(sources[s], payload, lie),
    })),
    fc.tuple(fc.constantFrom(...names.filter((n) => formatOf(sources[n]) === "png")), pngChunkStorm).map(([s, storm]) => ({
      source: s,
      kind: storm.lengthLie !== undefined ? "PNG chunk length lie" : storm.count > 64 ? "PNG chunk storm" : "extra PNG chunks",
      bytes: withPngChunks(sources[s], storm),
    })),
    fc.tuple(fc.constantFrom(...names.filter((n) => formatOf(sources[n]) === "webp")), webpLie).map(([s, lie]) => ({
      source: s,
      kind: `WebP ${lie.field} lie`,
      bytes: withWebpLie(sources[s], lie),
    })),
    fc.uint8Array({ maxLength: 2048 }).map((b) => ({ source: "random", kind: "random bytes", bytes: b })),
  ];
  return fc.oneof(...kinds);
}
