// The JPEG and WebP decoders keep one instance between clean calls and put their pixels
// into the caller's memory (codec-jpeg-turbo.ts copies them out of its heap; the Squoosh
// WebP glue writes them there itself, codec-squoosh.ts, glue-pixels-into.ts). What must hold:
// every decode gives the same pixels as a brand-new decoder would, a failure or warning
// never leaves its instance for the next call, and the global constructor the glue
// looks up is the real one again once a call returns.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { decodeImage } from "../../src/engine/imaging/decode.ts";
import { createCodecs } from "../../src/engine/imaging/codecs.ts";
import { fixture } from "./helpers.ts";

const RealClamped = Uint8ClampedArray;

async function pixels(bytes: Uint8Array, codecs = createCodecs(), into?: (n: number) => Uint8Array): Promise<Uint8ClampedArray> {
  const r = await decodeImage(bytes, { codecs, into });
  assert.ok(r.ok, !r.ok ? r.title : "");
  return r.image.data;
}

/** Counts WebAssembly instances made while `fn` runs. */
async function countingInstances<T>(fn: () => Promise<T>): Promise<{ made: number; value: T }> {
  const Real = WebAssembly.Instance;
  let made = 0;
  const Counting = function (this: unknown, module: WebAssembly.Module, imports?: WebAssembly.Imports) {
    made++;
    return new Real(module, imports);
  } as unknown as typeof WebAssembly.Instance;
  (WebAssembly as { Instance: unknown }).Instance = Counting;
  try {
    return { value: await fn(), made };
  } finally {
    (WebAssembly as { Instance: unknown }).Instance = Real;
  }
}

/** A JPEG that decodes whole but makes libjpeg warn: junk bytes before its end marker. */
function jpegWithWarning(): Uint8Array {
  const jpeg = fixture("images/jpeg-baseline.jpg");
  const end = jpeg.length - 2; // FF D9
  assert.deepEqual([jpeg[end], jpeg[end + 1]], [0xff, 0xd9]);
  return Uint8Array.from([...jpeg.subarray(0, end), 0x12, 0x34, 0xff, 0xd9]);
}

test("JPEG and WebP pixels land in the caller's memory, the same pixels as a plain decode", async () => {
  for (const file of ["images/jpeg-baseline.jpg", "images/jpeg-progressive.jpg", "images/webp-lossy.webp", "images/webp-lossless.webp"]) {
    const given: SharedArrayBuffer[] = [];
    let fromInsideTheGlue = false;
    const into = (n: number) => {
      const sab = new SharedArrayBuffer(n);
      given.push(sab);
      // Asked for by the stand-in while the codec runs, not by a copy afterwards.
      fromInsideTheGlue = globalThis.Uint8ClampedArray !== RealClamped;
      return new Uint8Array(sab);
    };
    const plain = await pixels(fixture(file));
    const shared = await pixels(fixture(file), createCodecs(), into);
    assert.equal(given.length, 1, `${file}: one block asked for`);
    // The Squoosh glue asks for it while it runs; libjpeg-turbo's pixels are copied once out of its heap.
    if (file.endsWith(".webp")) assert.ok(fromInsideTheGlue, `${file}: the codec wrote into it, no copy after`);
    assert.equal(shared.buffer, given[0], `${file}: the pixels are in the given memory`);
    assert.deepEqual(Buffer.from(shared), Buffer.from(plain), file);
    assert.equal(globalThis.Uint8ClampedArray, RealClamped, `${file}: the global is the real constructor again`);
  }
});

test("a kept decoder gives each image the pixels a new decoder gives it", async () => {
  const kept = createCodecs();
  const files = ["images/jpeg-progressive.jpg", "images/jpeg-baseline.jpg", "images/jpeg-grey.jpg", "images/jpeg-baseline.jpg", "images/webp-lossy.webp", "images/webp-lossless.webp", "images/webp-lossy.webp"];
  for (const file of files) {
    const bytes = fixture(file);
    assert.deepEqual(Buffer.from(await pixels(bytes, kept)), Buffer.from(await pixels(bytes)), file);
  }
});

test("a clean decode keeps its instance; a failure or a warning drops it", async () => {
  const codecs = createCodecs();
  const good = fixture("images/jpeg-baseline.jpg");
  const { made: first } = await countingInstances(async () => {
    await pixels(good, codecs);
    await pixels(good, codecs);
  });
  assert.equal(first, 1, "two clean decodes, one instance");

  const truncated = await countingInstances(async () => {
    const r = await decodeImage(fixture("images/jpeg-baseline-truncated.jpg"), { codecs });
    assert.ok(!r.ok && /truncated/.test(r.title));
    await pixels(good, codecs);
  });
  assert.equal(truncated.made, 1, "the failed decode used the kept instance, the next one a new one");

  const warned = await countingInstances(async () => {
    const data = await pixels(jpegWithWarning(), codecs); // decodes, with a warning on stderr
    assert.deepEqual(Buffer.from(data), Buffer.from(await pixels(good)));
    await pixels(good, codecs);
  });
  // One for the warned file's second try (its first stops at the warning, codec-jpeg-turbo.ts),
  // one for the reference decode (a new codec set), one after the warning.
  assert.equal(warned.made, 3, "after a warning the next decode starts a new instance");
  assert.equal(globalThis.Uint8ClampedArray, RealClamped);
});

test("a decode waiting on an instance that another call just broke gets a new one", async () => {
  const codecs = createCodecs();
  const good = fixture("images/jpeg-baseline.jpg");
  const reference = Buffer.from(await pixels(good));
  await pixels(good, codecs); // an instance is kept
  const { made, value } = await countingInstances(async () => {
    // Started together: both wait for the kept instance; the first breaks it.
    const [bad, fine] = await Promise.all([decodeImage(fixture("images/jpeg-baseline-truncated.jpg"), { codecs }), decodeImage(good, { codecs })]);
    return { bad, fine };
  });
  assert.ok(!value.bad.ok);
  assert.ok(value.fine.ok);
  assert.deepEqual(Buffer.from(value.fine.image.data), reference);
  assert.equal(made, 1, "the second call did not use the instance the first one broke");
});

// Node only: it reaches V8's gc() through --expose-gc set at run time, which Deno's node:v8
// does not honour (there `gc` never appears and the test would hang).
const noGc = "Deno" in globalThis && "needs V8's gc(), which only Node exposes at run time";

test("the decoder keeps no reference to the pixels it handed out (an idle worker would hold a whole image)", { skip: noGc }, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const codecs = createCodecs();
  // Decoded in a function of its own so that nothing of this frame points at the pixels.
  const decodeAndForget = async (): Promise<WeakRef<Uint8ClampedArray>> =>
    new WeakRef(await pixels(fixture("images/jpeg-baseline.jpg"), codecs, (n) => new Uint8Array(new SharedArrayBuffer(n))));
  const weak = await decodeAndForget();
  // A WeakRef's target stays alive until the current job ends.
  await new Promise((r) => setImmediate(r));
  gc();
  assert.equal(weak.deref(), undefined, "the pixels outlived the call");
});

test("release() drops the kept instance, and nothing keeps it or its heap alive after", { skip: noGc }, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const codecs = createCodecs();
  const good = fixture("images/jpeg-baseline.jpg");
  const Real = WebAssembly.Instance;
  let weak: WeakRef<WebAssembly.Instance> | undefined;
  (WebAssembly as { Instance: unknown }).Instance = function (module: WebAssembly.Module, imports?: WebAssembly.Imports) {
    const instance = new Real(module, imports);
    weak = new WeakRef(instance);
    return instance;
  };
  try {
    await pixels(good, codecs);
  } finally {
    (WebAssembly as { Instance: unknown }).Instance = Real;
  }
  assert.ok(weak, "the decode made an instance");
  // A WeakRef's target stays alive until the current job ends.
  await new Promise((r) => setImmediate(r));
  gc();
  assert.ok(weak.deref(), "a kept instance stays between calls");
  codecs.release!();
  await new Promise((r) => setImmediate(r));
  gc();
  assert.equal(weak.deref(), undefined, "the released instance (and with it its heap) outlived release()");
  const { made, value } = await countingInstances(() => pixels(good, codecs));
  assert.equal(made, 1, "the next decode starts a fresh instance");
  assert.deepEqual(Buffer.from(value), Buffer.from(await pixels(good)));
});
