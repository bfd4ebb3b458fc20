import { test } from "node:test";
import assert from "node:assert/strict";
import { sniffFormat } from "../../src/engine/imaging/sniff.ts";
import { checkPixelLimit, MAX_PIXELS, orientedSize, readImageHeader } from "../../src/engine/imaging/header.ts";
import { fixture, pngChunk, pngHeaderOnly, tiffOrientation } from "./helpers.ts";

const KINDS: Array<[file: string, format: string, width: number, height: number, components: number, alpha: boolean]> = [
  ["images/jpeg-baseline.jpg", "jpeg", 240, 160, 3, false],
  ["images/jpeg-progressive.jpg", "jpeg", 240, 160, 3, false],
  ["images/jpeg-grey.jpg", "jpeg", 240, 160, 1, false],
  ["images/jpeg-cmyk-adobe.jpg", "jpeg", 240, 160, 4, false],
  ["photos/rocket.jpg", "jpeg", 640, 427, 3, false],
  ["images/png-rgb.png", "png", 240, 160, 3, false],
  ["images/png-rgba.png", "png", 240, 160, 4, true],
  ["images/png-grey.png", "png", 240, 160, 1, false],
  ["images/png-grey-alpha.png", "png", 240, 160, 2, true],
  ["images/png-palette-trns.png", "png", 240, 160, 4, true],
  ["images/png-rgb16.png", "png", 240, 160, 3, false],
  ["photos/chelsea.png", "png", 451, 300, 3, false],
  ["images/webp-lossy.webp", "webp", 240, 160, 3, false],
  ["images/webp-lossless.webp", "webp", 240, 160, 3, false],
  ["images/webp-alpha.webp", "webp", 240, 160, 4, true],
];

test("sniffFormat: magic bytes decide, nothing else", () => {
  for (const [file, format] of KINDS) assert.equal(sniffFormat(fixture(file)), format, file);
  assert.equal(sniffFormat(new Uint8Array()), null);
  assert.equal(sniffFormat(new TextEncoder().encode("GIF89a.....")), null);
  assert.equal(sniffFormat(new TextEncoder().encode("RIFF\0\0\0\0WAVEfmt ")), null, "RIFF but not WebP");
  assert.equal(sniffFormat(new Uint8Array([0xff, 0xd8])), null, "SOI alone is too short");
});

test("readImageHeader: size, components and alpha of every input kind, from the header", () => {
  for (const [file, format, width, height, components, alpha] of KINDS) {
    const h = readImageHeader(fixture(file));
    assert.ok(h.ok, `${file}: ${!h.ok && h.title}`);
    assert.deepEqual(
      { format: h.format, width: h.width, height: h.height, components: h.components, alpha: h.hasAlpha, o: h.orientation },
      { format, width, height, components, alpha, o: 1 },
      file,
    );
  }
});

test("readImageHeader reads only the header: pixel data may be garbage or missing", () => {
  // IHDR of a 4000 x 3000 image followed by a token IDAT: nothing to decode, header fine.
  const h = readImageHeader(pngHeaderOnly(4000, 3000));
  assert.ok(h.ok);
  assert.equal(h.width * h.height, 12_000_000);
  // A JPEG cut right after its frame header still has a readable size.
  const jpeg = fixture("images/jpeg-progressive.jpg");
  const sof = jpeg.findIndex((b, i) => b === 0xff && jpeg[i + 1] === 0xc2);
  assert.ok(sof > 0, "progressive fixture has an SOF2 marker");
  const cut = readImageHeader(jpeg.subarray(0, sof + 2 + 17));
  assert.ok(cut.ok && cut.width === 240 && cut.height === 160);
});

test("EXIF orientation: JPEG APP1 in both byte orders, PNG eXIf, WebP EXIF", () => {
  for (let n = 1; n <= 8; n++) {
    const h = readImageHeader(fixture(`images/orient-${n}.jpg`));
    assert.ok(h.ok);
    assert.equal(h.orientation, n, `orient-${n}.jpg (${n % 2 === 0 ? "II" : "MM"})`);
    assert.deepEqual([h.width, h.height], n >= 5 ? [48, 64] : [64, 48], "stored size, before orientation");
  }
  const png = readImageHeader(fixture("images/png-exif-orient-8.png"));
  assert.ok(png.ok && png.orientation === 8);
  const webp = readImageHeader(fixture("images/webp-exif-orient-6.webp"));
  assert.ok(webp.ok && webp.orientation === 6 && webp.width === 48 && webp.height === 64);
  // Constructed: eXIf with a little-endian TIFF block.
  const le = readImageHeader(pngHeaderOnly(10, 20, [pngChunk("eXIf", tiffOrientation(6, true))]));
  assert.ok(le.ok && le.orientation === 6);
  // Out-of-range or broken EXIF means upright, not a rejection.
  const bad = readImageHeader(pngHeaderOnly(10, 20, [pngChunk("eXIf", tiffOrientation(9, false))]));
  assert.ok(bad.ok && bad.orientation === 1);
  const junk = readImageHeader(pngHeaderOnly(10, 20, [pngChunk("eXIf", new Uint8Array([1, 2, 3]))]));
  assert.ok(junk.ok && junk.orientation === 1);
});

test("orientedSize swaps the sides for orientations 5 to 8", () => {
  assert.deepEqual(orientedSize(64, 48, 1), { width: 64, height: 48 });
  assert.deepEqual(orientedSize(64, 48, 4), { width: 64, height: 48 });
  assert.deepEqual(orientedSize(64, 48, 6), { width: 48, height: 64 });
  assert.deepEqual(orientedSize(64, 48, 8), { width: 48, height: 64 });
});

test("pixel limit: exactly 12,000,000 passes, one column more does not", () => {
  assert.equal(MAX_PIXELS, 12_000_000);
  const at = readImageHeader(pngHeaderOnly(4000, 3000));
  const over = readImageHeader(pngHeaderOnly(4001, 3000));
  assert.ok(at.ok && over.ok);
  assert.deepEqual(checkPixelLimit(at), { ok: true });
  assert.deepEqual(checkPixelLimit(over), {
    ok: false,
    code: "invalid_parameter",
    title: "Image is 4001 x 3000 pixels (12,003,000); the limit is 12,000,000 pixels",
  });
});

test("the decompression bomb is refused from its header", () => {
  const bomb = fixture("images/png-bomb-20000x20000.png");
  assert.ok(bomb.length < 100_000, "a small file...");
  const h = readImageHeader(bomb);
  assert.ok(h.ok && h.width === 20000 && h.height === 20000, "...claiming 400 MP");
  const limit = checkPixelLimit(h);
  assert.ok(!limit.ok);
  assert.equal(limit.title, "Image is 20000 x 20000 pixels (400,000,000); the limit is 12,000,000 pixels");
});

test("truncated and corrupt headers give failures, never exceptions", () => {
  for (const [file] of KINDS) {
    const bytes = fixture(file);
    const h = readImageHeader(bytes);
    assert.ok(h.ok);
    // Every prefix shorter than the header must fail cleanly.
    for (let n = 0; n < Math.min(bytes.length, 400); n++) {
      const r = readImageHeader(bytes.subarray(0, n));
      if (r.ok) {
        assert.deepEqual([r.width, r.height], [h.width, h.height], `${file} cut at ${n} bytes gave another size`);
      } else {
        assert.equal(r.code, "invalid_parameter");
        assert.ok(r.title.length > 10, `${file} cut at ${n}: "${r.title}"`);
      }
    }
  }
  const wrongMagic = fixture("images/png-rgb.png").slice();
  wrongMagic[1] = 0x51;
  const r = readImageHeader(wrongMagic);
  assert.ok(!r.ok && /not a JPEG, PNG or WebP/.test(r.title));
});

test("specific header corruptions are named", () => {
  const zero = pngHeaderOnly(0, 10);
  const z = readImageHeader(zero);
  assert.ok(!z.ok && /invalid size \(0 x 10\)/.test(z.title));

  const badDepth = pngHeaderOnly(10, 10).slice();
  badDepth[24] = 3; // RGB with bit depth 3
  const d = readImageHeader(badDepth);
  assert.ok(!d.ok && /colour type 2 with bit depth 3/.test(d.title));

  const jpeg = fixture("images/jpeg-baseline.jpg").slice();
  jpeg[4] = 0; // the APP0 segment length becomes 1, less than its own 2 bytes
  jpeg[5] = 1;
  const j = readImageHeader(jpeg);
  assert.ok(!j.ok && /bad segment length/.test(j.title));

  const webp = fixture("images/webp-lossy.webp").slice();
  webp[23] = 0; // break the VP8 start code 9D 01 2A
  const w = readImageHeader(webp);
  assert.ok(!w.ok && /start code/.test(w.title));

  const animated = fixture("images/webp-alpha.webp").slice();
  assert.equal(String.fromCharCode(...animated.subarray(12, 16)), "VP8X");
  animated[20] |= 0x02;
  const a = readImageHeader(animated);
  assert.ok(!a.ok && /Animated/.test(a.title));
});
