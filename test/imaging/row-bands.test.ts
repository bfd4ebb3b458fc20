// Splitting the pixel steps into row bands (src/engine/imaging/row-bands.ts) must not change a
// byte: any cut, bands in any order, gives what the single-threaded functions give.
// Real helper threads are in test/product/pipeline-bands.test.ts; here the bands run one
// after another on this thread, in reverse order, from shared memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bandRanges, runBand, runBeside, runPieces, type RowBands } from "../../src/engine/imaging/row-bands.ts";
import { cutoutInBands, modelInputInBands, resizeImageInBands, shareBytes, shareImage } from "../../src/engine/imaging/cutout-bands.ts";
import { composeCutoutInPlace, resizeMask, resizeRGBA, resizeToRGB, type RGBA } from "../../src/engine/imaging/index.ts";
import { foregroundGrid } from "../../src/engine/imaging/foreground.ts";

/** Bands cut as `parts` threads would cut them, run here last band first, in SharedArrayBuffers. */
function reversedBands(parts: number): RowBands & { cuts: number[][] } {
  const cuts: number[][] = [];
  return {
    parts,
    cuts,
    begin() {},
    bytes: (n) => new Uint8Array(new SharedArrayBuffer(n)),
    floats: (n) => new Float32Array(new SharedArrayBuffer(n * 4)),
    async run(task, args, rows, align = 1) {
      const ranges = bandRanges(rows, parts, align);
      cuts.push(ranges.map((r) => r.y0));
      for (const r of ranges.reverse()) runBand(task, args, r);
    },
    beside: runBeside,
  };
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) >>> 24);
}

/** Smooth colour ramps with noise; with `holes`, some transparent and half-transparent pixels. */
function image(w: number, h: number, seed: number, holes: boolean): RGBA {
  const next = random(seed);
  const data = new Uint8ClampedArray(w * h * 4);
  for (let p = 0; p < w * h; p++) {
    const x = p % w, y = Math.floor(p / w);
    data.set([(x * 3 + next()) & 255, (y * 2 + next()) & 255, next(), holes && (x + y) % 11 === 0 ? next() : 255], p * 4);
  }
  return { width: w, height: h, data };
}

/** A model-like mask: a soft-edged blob, mostly 0 and 255 with a ramp between. */
function mask(mw: number, mh: number): Uint8Array {
  const m = new Uint8Array(mw * mh);
  for (let y = 0; y < mh; y++) {
    for (let x = 0; x < mw; x++) {
      const d = Math.hypot(x - mw * 0.45, y - mh * 0.55) / (Math.min(mw, mh) * 0.3);
      m[y * mw + x] = Math.max(0, Math.min(255, Math.round((1.4 - d) * 300)));
    }
  }
  return m;
}

test("bandRanges: covers every row once, inner edges on the alignment, never an empty band", () => {
  for (const [rows, parts, align] of [[2828, 2, 7], [2828, 4, 7], [3, 2, 1], [1, 4, 1], [10, 3, 4], [100, 1, 9]] as const) {
    const r = bandRanges(rows, parts, align);
    assert.equal(r[0]!.y0, 0);
    assert.equal(r.at(-1)!.y1, rows);
    for (let i = 0; i < r.length; i++) {
      assert.ok(r[i]!.y1 > r[i]!.y0, `band ${i} of ${rows}/${parts} is empty`);
      if (i > 0) assert.equal(r[i]!.y0, r[i - 1]!.y1);
      if (i < r.length - 1) assert.equal(r[i]!.y1 % align, 0);
    }
    assert.ok(r.length <= parts);
  }
});

test("cut into bands, the model input and the cut-out are the same bytes as in one piece", async () => {
  // 900 x 700 is past the grid's 0.25 MP, so cells are 2 px and the cuts must fall on them.
  for (const [w, h, holes, semitransparency] of [[900, 700, false, true], [900, 700, true, false], [333, 251, true, true], [64, 3, false, true]] as const) {
    const src = image(w, h, w + h, holes);
    const m = mask(96, 80);
    for (const parts of [2, 3]) {
      const bands = reversedBands(parts);
      const shared = shareImage({ ...src, data: src.data.slice() }, bands);
      assert.ok(shared.data.buffer instanceof SharedArrayBuffer);
      const rgb = await modelInputInBands(shared, 96, 80, bands);
      assert.deepEqual(rgb, resizeToRGB(src, 96, 80), `${w}x${h} model input, ${parts} bands`);
      const smaller = await resizeImageInBands(shared, Math.ceil(w / 3), Math.ceil(h / 3), bands);
      assert.deepEqual(smaller, resizeRGBA(src, Math.ceil(w / 3), Math.ceil(h / 3)), `${w}x${h} smaller tier, ${parts} bands`);

      const alpha = await cutoutInBands(shared, shareBytes(m, bands), 96, 80, { semitransparency }, bands);
      const one = { ...src, data: src.data.slice() };
      const oneAlpha = resizeMask(m, 96, 80, w, h);
      composeCutoutInPlace(one, oneAlpha, { semitransparency });
      assert.deepEqual(alpha, oneAlpha, `${w}x${h} alpha, ${parts} bands`);
      assert.deepEqual(shared.data, one.data, `${w}x${h} cut-out, ${parts} bands`);
      if (w === 900) {
        // The grid-means step was cut on cell edges (2 px here), and the cuts were real.
        const k = foregroundGrid(w, h).k;
        assert.equal(k, 2);
        assert.ok(bands.cuts.every((c) => c.length === Math.min(parts, c.length) && c.length > 1));
        assert.ok(bands.cuts[2]!.every((y) => y % k === 0), `mask cuts ${bands.cuts[2]} on multiples of ${k}`);
      }
    }
  }
});

test("runPieces: takes pieces from the shared counter, each once, and leaves those already taken", () => {
  const img = image(96, 64, 7, false);
  const whole = resizeToRGB(img, 40, 30);
  const pieces = bandRanges(30, 6);
  const out = new Uint8Array(40 * 30 * 3).fill(7);
  const next = new Int32Array(new SharedArrayBuffer(4));
  // Another thread has taken pieces 0 and 1 already: this one makes only the rest.
  next[0] = 2;
  runPieces("modelInput", { img, width: 40, height: 30, out, opaque: true }, pieces, next);
  assert.equal(next[0], pieces.length + 1, "the counter is past the last piece");
  const firstRows = pieces[2]!.y0 * 40 * 3;
  assert.ok(out.subarray(0, firstRows).every((v) => v === 7), "the taken pieces' rows are untouched");
  assert.deepEqual(out.subarray(firstRows), whole.subarray(firstRows));
  // A second taker finds nothing left and writes nothing.
  out.fill(9, 0, firstRows);
  runPieces("modelInput", { img, width: 40, height: 30, out, opaque: true }, pieces, next);
  assert.ok(out.subarray(0, firstRows).every((v) => v === 9));
});
