import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeImage, MAX_JPEG_SCANS } from "../../src/engine/imaging/decode.ts";
import type { RGBA } from "../../src/engine/imaging/types.ts";
import { resizeRGBA } from "../../src/engine/imaging/resize.ts";
import { assertClose, fixture, greyPng, meanColour, seededRandom, spyCodecs } from "./helpers.ts";

async function decoded(file: string): Promise<RGBA> {
  const r = await decodeImage(fixture(file));
  assert.ok(r.ok, `${file}: ${!r.ok && r.title} (${!r.ok && r.detail})`);
  return r.image;
}

// The derived fixtures are the photos scaled to 240 x 160; the same scaling of the
// original (decoded through a different path, the PNG/JPEG original) is the reference.
async function reference(photo: string): Promise<RGBA> {
  return resizeRGBA(await decoded(photo), 240, 160);
}

test("colour JPEG, PNG and WebP kinds decode to the right size and the photo's colours", async () => {
  const cat = meanColour(await reference("photos/chelsea.png"));
  const rocket = meanColour(await reference("photos/rocket.jpg"));
  const cases: Array<[string, number[], number]> = [
    ["images/jpeg-baseline.jpg", rocket, 3],
    ["images/jpeg-progressive.jpg", cat, 3],
    ["images/jpeg-cmyk-adobe.jpg", cat, 4],
    ["images/png-rgb.png", cat, 1.5],
    ["images/png-rgb16.png", cat, 1.5],
    ["images/webp-lossy.webp", cat, 3],
    ["images/webp-lossless.webp", cat, 1.5],
  ];
  for (const [file, expected, tolerance] of cases) {
    const img = await decoded(file);
    assert.deepEqual([img.width, img.height, img.data.length], [240, 160, 240 * 160 * 4], file);
    const mean = meanColour(img);
    for (let c = 0; c < 3; c++) assertClose(mean[c], expected[c], tolerance, `${file} channel ${"RGB"[c]}`);
    assert.equal(mean[3], 255, `${file} is opaque`);
  }
});

test("the 16-bit PNG decodes to the same 8-bit pixels as its 8-bit twin", async () => {
  const a = await decoded("images/png-rgb16.png");
  const b = await decoded("images/png-rgb.png");
  let maxDiff = 0;
  for (let i = 0; i < a.data.length; i++) maxDiff = Math.max(maxDiff, Math.abs(a.data[i] - b.data[i]));
  assert.ok(maxDiff <= 1, `max difference ${maxDiff}`);
});

test("greyscale JPEG and PNG decode to grey pixels of the photo's luminance", async () => {
  const [r, g, b] = meanColour(await reference("photos/chelsea.png"));
  const luma = 0.2126 * r + 0.7152 * g + 0.0722 * b; // ImageMagick's Gray (Rec. 709 luma)
  for (const file of ["images/jpeg-grey.jpg", "images/png-grey.png"]) {
    const img = await decoded(file);
    for (let i = 0; i < img.data.length; i += 4) {
      assert.ok(img.data[i] === img.data[i + 1] && img.data[i + 1] === img.data[i + 2], `${file}: colour at ${i / 4}`);
    }
    assertClose(meanColour(img)[0], luma, 4, `${file} luminance`);
  }
});

test("transparency survives: RGBA, grey+alpha, palette+tRNS, WebP alpha", async () => {
  const rgba = await decoded("images/png-rgba.png");
  const alphaMean = meanColour(rgba)[3];
  assert.ok(alphaMean > 40 && alphaMean < 200, `alpha mean ${alphaMean}`);
  const opaqueCat = meanColour(await decoded("images/png-rgb.png"));
  for (const file of ["images/png-grey-alpha.png", "images/webp-alpha.webp", "images/png-palette-trns.png"]) {
    const img = await decoded(file);
    assert.deepEqual([img.width, img.height], [240, 160]);
    const binary = file.includes("palette"); // PNG8 transparency is all-or-nothing
    if (binary) {
      const values = new Set<number>();
      for (let i = 3; i < img.data.length; i += 4) values.add(img.data[i]);
      assert.deepEqual([...values].sort((x, y) => x - y), [0, 255]);
    } else {
      // Same alpha channel as the RGBA original (WebP stores alpha losslessly here).
      let maxDiff = 0;
      for (let i = 3; i < img.data.length; i += 4) maxDiff = Math.max(maxDiff, Math.abs(img.data[i] - rgba.data[i]));
      assert.ok(maxDiff <= 2, `${file}: alpha differs by up to ${maxDiff}`);
    }
    if (!file.includes("grey")) {
      // Colour where the pixel is visible matches the opaque original there.
      const visible = (p: number) => img.data[p * 4 + 3] === 255 || (!binary && img.data[p * 4 + 3] > 200);
      const got = meanColour(img, visible);
      const want = meanColour(await decoded("images/png-rgb.png"), visible);
      for (let c = 0; c < 3; c++) assertClose(got[c], want[c], binary ? 8 : 3, `${file} channel ${"RGB"[c]}`);
    }
  }
  assert.ok(opaqueCat[3] === 255);
});

test("decodeImage returns stored pixels and the header's orientation", async () => {
  const r = await decodeImage(fixture("images/orient-6.jpg"));
  assert.ok(r.ok);
  assert.equal(r.header.orientation, 6);
  assert.deepEqual([r.image.width, r.image.height], [48, 64], "not yet rotated");
});

test("12 MP boundary: 4000 x 3000 decodes, 4001 x 3000 never reaches a decoder", async () => {
  const at = await decodeImage(greyPng(4000, 3000, 77));
  assert.ok(at.ok, !at.ok ? at.title : "");
  assert.deepEqual([at.image.width, at.image.height], [4000, 3000]);
  assert.deepEqual([...at.image.data.subarray(0, 4)], [77, 77, 77, 255]);

  const spy = spyCodecs();
  const over = await decodeImage(greyPng(4001, 3000), { codecs: spy });
  assert.ok(!over.ok);
  assert.equal(over.title, "Image is 4001 x 3000 pixels (12,003,000); the limit is 12,000,000 pixels");
  assert.deepEqual(spy.calls, []);
});

test("the PNG bomb is refused before any decoder is called", async () => {
  const spy = spyCodecs();
  const r = await decodeImage(fixture("images/png-bomb-20000x20000.png"), { codecs: spy });
  assert.ok(!r.ok && r.code === "invalid_parameter");
  assert.match(r.title, /20000 x 20000 pixels \(400,000,000\); the limit is 12,000,000/);
  assert.deepEqual(spy.calls, [], "no decoder call, so no 1.6 GB allocation");
});

test("a custom pixel limit applies before decoding and again after", async () => {
  const spy = spyCodecs();
  const r = await decodeImage(fixture("images/png-rgb.png"), { codecs: spy, maxPixels: 1000 });
  assert.ok(!r.ok && /the limit is 1,000 pixels/.test(r.title));
  assert.deepEqual(spy.calls, []);
  // A decoder that returns more pixels than the header said is caught too.
  const lying = {
    ...spy,
    decodePng: async () => ({ ok: true as const, image: { width: 300, height: 160, data: new Uint8ClampedArray(300 * 160 * 4) } }),
  };
  const l = await decodeImage(fixture("images/png-rgb.png"), { codecs: lying });
  assert.ok(!l.ok && /header says 240 x 160, its data 300 x 160/.test(l.title));
});

test("CMYK JPEGs go to the CMYK decoder, others to MozJPEG", async () => {
  const spy = spyCodecs();
  await decodeImage(fixture("images/jpeg-cmyk-adobe.jpg"), { codecs: spy });
  await decodeImage(fixture("images/jpeg-grey.jpg"), { codecs: spy });
  await decodeImage(fixture("images/png-grey.png"), { codecs: spy });
  await decodeImage(fixture("images/webp-lossless.webp"), { codecs: spy });
  assert.deepEqual(spy.calls, ["cmyk", "jpeg", "png", "webp"]);
});

test("truncated files fail with a failure value", async () => {
  const jpeg = await decodeImage(fixture("images/jpeg-baseline-truncated.jpg"));
  assert.ok(!jpeg.ok);
  assert.equal(jpeg.title, "The JPEG file is truncated: its image data ends early");
  for (const file of ["images/png-rgba-truncated.png", "images/webp-lossy-truncated.webp"]) {
    const r = await decodeImage(fixture(file));
    assert.ok(!r.ok && r.code === "invalid_parameter", file);
    assert.match(r.title, /(truncated|corrupt)/, file);
  }
  // Cut anywhere in the pixel data: never an exception, never a wrong-size image.
  for (const file of ["images/jpeg-progressive.jpg", "images/png-palette-trns.png", "images/webp-lossless.webp", "images/jpeg-cmyk-adobe.jpg"]) {
    const whole = fixture(file);
    for (const fraction of [0.3, 0.6, 0.9, 0.99]) {
      const r = await decodeImage(whole.subarray(0, Math.floor(whole.length * fraction)));
      assert.ok(!r.ok, `${file} cut at ${fraction} decoded`);
    }
  }
});

test("wrong magic, empty input and random bytes are refused", async () => {
  const spy = spyCodecs();
  for (const bytes of [new Uint8Array(), new TextEncoder().encode("<svg></svg>"), fixture("images/png-rgb.png").slice(1)]) {
    const r = await decodeImage(bytes, { codecs: spy });
    assert.ok(!r.ok && /not a JPEG, PNG or WebP/.test(r.title));
  }
  const random = seededRandom(7);
  for (let i = 0; i < 20; i++) {
    const noise = Uint8Array.from({ length: 2000 }, () => Math.floor(random() * 256));
    // Give half of them a valid signature so they reach the decoders.
    if (i % 2 === 0) noise.set([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]);
    const r = await decodeImage(noise);
    assert.ok(!r.ok, `noise ${i}`);
  }
  assert.deepEqual(spy.calls, []);
});

test("bit flips anywhere never throw; whatever decodes has the header's size", async () => {
  const random = seededRandom(2024);
  const files = ["images/jpeg-baseline.jpg", "images/jpeg-progressive.jpg", "images/png-rgb.png", "images/webp-lossy.webp", "images/webp-alpha.webp"];
  let failures = 0;
  let total = 0;
  for (const file of files) {
    const original = fixture(file);
    for (let i = 0; i < 40; i++) {
      const bytes = original.slice();
      // Bias towards the first 600 bytes, where the headers and tables are.
      const at = i % 2 === 0 ? Math.floor(random() * Math.min(600, bytes.length)) : Math.floor(random() * bytes.length);
      bytes[at] ^= 1 << Math.floor(random() * 8);
      const r = await decodeImage(bytes); // must not reject
      total++;
      if (r.ok) {
        assert.equal(r.image.data.length, r.image.width * r.image.height * 4);
        assert.deepEqual([r.image.width, r.image.height], [r.header.width, r.header.height]);
      } else {
        failures++;
        assert.equal(r.code, "invalid_parameter");
      }
    }
  }
  assert.ok(failures > 0 && failures < total, `${failures} of ${total} flipped files failed`);
  // The decoders are still healthy afterwards.
  assert.ok((await decodeImage(fixture("images/jpeg-baseline.jpg"))).ok);
  assert.ok((await decodeImage(fixture("images/png-rgb.png"))).ok);
});

test("progressive JPEGs with absurd scan counts are refused before decoding", async () => {
  const head = [0xff, 0xd8, 0xff, 0xc2, 0x00, 0x0b, 0x08, 0x00, 0x10, 0x00, 0x10, 0x01, 0x01, 0x11, 0x00];
  const scans: number[] = [];
  for (let i = 0; i <= MAX_JPEG_SCANS; i++) scans.push(0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00);
  const spy = spyCodecs();
  const r = await decodeImage(new Uint8Array([...head, ...scans, 0xff, 0xd9]), { codecs: spy });
  assert.ok(!r.ok && /501 scans; at most 500/.test(r.title), !r.ok ? r.title : "");
  assert.deepEqual(spy.calls, []);
});
