// Decoding a JPEG at the size the work needs (decode.ts's atLeast, libjpeg's DCT scaling in
// codec-jpeg-turbo.ts): the fewest eighths whose sides are still at least what is asked
// for, upright (an EXIF turn swaps the sides); the same failures, in the same words, as a
// full decode; other formats and CMYK JPEGs at full size.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeEighths, decodeImage, jpegEighths } from "../../src/engine/imaging/decode.ts";
import { scaledSide } from "../../src/engine/imaging/codec-jpeg-turbo.ts";
import { readImageHeader } from "../../src/engine/imaging/header.ts";
import { resizeRGBA } from "../../src/engine/imaging/resize.ts";
import { assertClose, fixture, meanColour } from "./helpers.ts";

test("jpegEighths: the fewest eighths whose rounded-up sides reach the need on both axes", () => {
  // 4242 x 2828 (the 12 MP bench photo) for a 1024² model input: the height decides.
  assert.equal(jpegEighths({ width: 4242, height: 2828 }, { width: 1024, height: 1024 }), 3); // 1591 x 1061
  assert.equal(scaledSide(2828, 3), 1061);
  assert.equal(scaledSide(2828, 2), 707);
  // A preview of it (612 x 408) alone: 1/8 is 531 x 354, too small; 2/8 is 1061 x 707.
  assert.equal(jpegEighths({ width: 4242, height: 2828 }, { width: 612, height: 408 }), 2);
  // Exactly reachable: 800 x 600 needing 100 x 75 is 1/8 (sides rounded up: 100 x 75).
  assert.equal(jpegEighths({ width: 800, height: 600 }, { width: 100, height: 75 }), 1);
  assert.equal(jpegEighths({ width: 800, height: 600 }, { width: 101, height: 75 }), 2);
  // A need as large as the picture, or larger, is the full size.
  assert.equal(jpegEighths({ width: 774, height: 516 }, { width: 1024, height: 1024 }), 8);
  assert.equal(jpegEighths({ width: 640, height: 427 }, { width: 640, height: 427 }), 8);
});

test("decodeEighths turns an upright need to the stored sides, and scales only YCbCr and grey JPEGs", () => {
  const header = (file: string) => {
    const h = readImageHeader(fixture(file));
    assert.ok(h.ok, file);
    return h;
  };
  // orient-6.jpg is stored 48 x 64 and shown 64 x 48: an upright need of 32 x 8 is 8 x 32 stored.
  const turned = header("images/orient-6.jpg");
  assert.deepEqual([turned.width, turned.height, turned.orientation], [48, 64, 6]);
  assert.equal(decodeEighths(turned, { width: 32, height: 8 }), 4); // stored 24 x 32: the stored height needs 4/8
  assert.equal(decodeEighths(turned, { width: 8, height: 32 }), 6); // stored 32 x 8: the stored width needs 6/8 (36)
  assert.equal(decodeEighths(header("images/jpeg-cmyk-adobe.jpg"), { width: 1, height: 1 }), 8);
  assert.equal(decodeEighths(header("images/png-rgb.png"), { width: 1, height: 1 }), 8);
  assert.equal(decodeEighths(header("images/jpeg-baseline.jpg"), undefined), 8);
});

test("a scaled decode has the rounded-up sides and the picture a full decode shrunk to them has", async () => {
  for (const file of ["images/jpeg-baseline.jpg", "images/jpeg-progressive.jpg", "images/jpeg-grey.jpg", "photos/rocket.jpg"]) {
    const full = await decodeImage(fixture(file));
    assert.ok(full.ok && full.eighths === 8, file);
    for (const k of [1, 2, 3, 4, 6]) {
      const need: { width: number; height: number } = { width: scaledSide(full.image.width, k), height: scaledSide(full.image.height, k) };
      const scaled = await decodeImage(fixture(file), { atLeast: need });
      assert.ok(scaled.ok, file);
      assert.equal(scaled.eighths, jpegEighths(full.image, need), `${file} at ${k}/8`);
      assert.ok(scaled.eighths <= k, `${file}: ${scaled.eighths}/8 for a need met at ${k}/8`);
      assert.deepEqual([scaled.image.width, scaled.image.height], [scaledSide(full.image.width, scaled.eighths), scaledSide(full.image.height, scaled.eighths)]);
      assert.ok(scaled.image.width >= need.width && scaled.image.height >= need.height, `${file}: at least what was asked`);
      assert.deepEqual([scaled.header.width, scaled.header.height], [full.image.width, full.image.height], "the header is the picture's");
      // The same picture: a full decode shrunk to the same size has the same mean colour.
      const shrunk = meanColour(resizeRGBA(full.image, scaled.image.width, scaled.image.height));
      const mean = meanColour(scaled.image);
      for (let c = 0; c < 4; c++) assertClose(mean[c], shrunk[c], 1.5, `${file} at ${scaled.eighths}/8, channel ${"RGBA"[c]}`);
    }
  }
});

test("an EXIF-turned JPEG is scaled by its stored sides and comes out as stored", async () => {
  // Stored 48 x 64, shown 64 x 48: an upright need of 24 x 16 is 16 x 24 stored, 3/8 (18 x 24).
  const r = await decodeImage(fixture("images/orient-6.jpg"), { atLeast: { width: 24, height: 16 } });
  assert.ok(r.ok);
  assert.equal(r.eighths, 3);
  assert.deepEqual([r.image.width, r.image.height], [18, 24]);
});

test("CMYK JPEGs, PNG and WebP ignore the need and decode at full size", async () => {
  for (const file of ["images/jpeg-cmyk-adobe.jpg", "images/png-rgb.png", "images/webp-lossy.webp"]) {
    const r = await decodeImage(fixture(file), { atLeast: { width: 30, height: 20 } });
    assert.ok(r.ok, file);
    assert.deepEqual([r.eighths, r.image.width, r.image.height], [8, 240, 160], file);
  }
});

test("a scaled decode refuses what a full one refuses, in the same words", async () => {
  const need = { width: 30, height: 20 };
  const truncated = fixture("images/jpeg-baseline-truncated.jpg");
  const [full, scaled] = [await decodeImage(truncated), await decodeImage(truncated, { atLeast: need })];
  assert.ok(!full.ok && !scaled.ok);
  assert.equal(scaled.title, full.title);
  assert.equal(scaled.title, "The JPEG file is truncated: its image data ends early");

  // A corrupt scan header (its length field 3): an error, not a warning, at any scale.
  const corrupt = fixture("images/jpeg-baseline.jpg");
  let sos = 2;
  while (!(corrupt[sos] === 0xff && corrupt[sos + 1] === 0xda)) sos++;
  corrupt.set([0, 3], sos + 2);
  for (const r of [await decodeImage(corrupt), await decodeImage(corrupt, { atLeast: need })]) {
    assert.ok(!r.ok);
    assert.equal(r.title, "The JPEG image data is corrupt or not supported and could not be decoded");
    assert.equal(r.detail, "Bogus marker length", "libjpeg's own message, for the logs");
  }

  // The 12 MP limit is the header's, whatever scale the decode would have been.
  const big = fixture("images/jpeg-baseline.jpg");
  let sof = 2;
  while (big[sof + 1] !== 0xc0) sof += 2 + ((big[sof + 2]! << 8) | big[sof + 3]!);
  big.set([4000 >> 8, 4000 & 0xff, 4000 >> 8, 4000 & 0xff], sof + 5);
  const tooBig = await decodeImage(big, { atLeast: need });
  assert.ok(!tooBig.ok);
  assert.match(tooBig.title, /4000 x 4000 pixels \(16,000,000\); the limit is 12,000,000 pixels/);
});

test("the header and the data must agree at a reduced scale too", async () => {
  // A codec that answers one pixel short of the scaled size the header implies.
  const { createCodecs } = await import("../../src/engine/imaging/codecs.ts");
  const real = createCodecs();
  const codecs = {
    ...real,
    async decodeJpeg(bytes: Uint8Array, into?: (n: number) => Uint8Array, eighths?: number) {
      const r = await real.decodeJpeg(bytes, into, eighths);
      if (!r.ok) return r;
      const width = r.image.width - 1;
      return { ok: true as const, image: { width, height: r.image.height, data: r.image.data.subarray(0, width * r.image.height * 4) } };
    },
  };
  const r = await decodeImage(fixture("images/jpeg-baseline.jpg"), { codecs, atLeast: { width: 60, height: 40 } });
  assert.ok(!r.ok);
  assert.equal(r.title, "The JPEG file is inconsistent: its header says 240 x 160, its data 59 x 40 (decoded at 2/8: 60 x 40 expected)");
});
