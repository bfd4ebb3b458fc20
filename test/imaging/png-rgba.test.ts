// Our RGBA PNG writer (png-rgba.ts) checked against independent readers: node:zlib's
// inflate (which verifies the stream's Adler-32) and its CRC-32, chunk by chunk.
import { test } from "node:test";
import assert from "node:assert/strict";
import { crc32, inflateSync } from "node:zlib";
import { encodePng } from "../../src/engine/imaging/encode.ts";
import { crc32ByTable } from "../../src/engine/imaging/png-chunks.ts";
import type { RGBA } from "../../src/engine/imaging/types.ts";
import { seededRandom } from "./helpers.ts";

interface Chunk {
  type: string;
  data: Buffer;
}

function chunks(png: Uint8Array): Chunk[] {
  const buf = Buffer.from(png);
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "signature");
  const out: Chunk[] = [];
  for (let at = 8; at < buf.length; ) {
    const n = buf.readUInt32BE(at);
    const type = buf.toString("latin1", at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + n);
    assert.equal(buf.readUInt32BE(at + 8 + n), crc32(buf.subarray(at + 4, at + 8 + n)), `CRC of ${type} at ${at}`);
    out.push({ type, data });
    at += 12 + n;
  }
  return out;
}

/** The pixels back from the PNG's rows, undoing each row's filter (we only write None and Up). */
function pixelsOf(png: Uint8Array, width: number, height: number): Uint8Array {
  const list = chunks(png);
  assert.equal(list[0]!.type, "IHDR");
  assert.equal(list.at(-1)!.type, "IEND");
  const raw = inflateSync(Buffer.concat(list.filter((c) => c.type === "IDAT").map((c) => c.data))); // throws on a wrong Adler-32
  const stride = width * 4;
  assert.equal(raw.length, height * (stride + 1));
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)]!;
    assert.ok(f === 0 || f === 2, `row ${y} filter ${f}`);
    for (let i = 0; i < stride; i++) {
      const v = raw[y * (stride + 1) + 1 + i]!;
      px[y * stride + i] = f === 2 && y > 0 ? (v + px[(y - 1) * stride + i]!) & 255 : v;
    }
  }
  return px;
}

function image(width: number, height: number, seed: number): RGBA {
  const random = seededRandom(seed);
  const data = new Uint8ClampedArray(width * height * 4);
  // A transparent margin (zeros, as a cut-out has), a noisy middle, a smooth band.
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const i = (y * width + x) * 4;
    if (x < width / 4) continue;
    if (y < height / 2) for (let c = 0; c < 4; c++) data[i + c] = Math.floor(random() * 256);
    else data.set([x & 255, y & 255, (x + y) & 255, 255], i);
  }
  return { width, height, data };
}

test("the stream inflates with its Adler-32 checked, every chunk's CRC is right, the pixels come back", async () => {
  // Heights below, at and above the segment count, odd widths.
  for (const [w, h] of [[1, 1], [5, 3], [7, 8], [33, 9], [97, 61], [300, 257]]) {
    const img = image(w, h, w * 31 + h);
    const png = await encodePng(img);
    assert.deepEqual(Buffer.from(pixelsOf(png, w, h)), Buffer.from(img.data), `${w} x ${h}`);
  }
});

test("pixels at an offset not a multiple of 4 are read right", async () => {
  const img = image(41, 23, 5);
  const shifted = new Uint8ClampedArray(img.data.length + 1);
  shifted.set(img.data, 1);
  const png = await encodePng({ width: 41, height: 23, data: shifted.subarray(1) });
  assert.deepEqual(Buffer.from(pixelsOf(png, 41, 23)), Buffer.from(img.data));
});

test("the table CRC-32 (for runtimes without zlib.crc32) is node:zlib's", () => {
  const random = seededRandom(32);
  for (const n of [0, 1, 7, 1000, 65537]) {
    const bytes = Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
    assert.equal(crc32ByTable(bytes), crc32(bytes), `${n} bytes`);
  }
});
