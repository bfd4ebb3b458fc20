// The pipeline's row bands on real helper threads (src/engine/pipeline/pipeline-bands.ts): the
// same PNG bytes as with every band on one thread, for every tier and format; a band
// that fails in a band thread fails that run only; release() gives the arena back; a
// pool worker with two session threads reports its helper; and the full-size decode
// beside the model's run (overlapDecode) gives the same cut-out, fails the same, and is
// over before a run that fails returns.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startThreadBands, type ThreadBands } from "../../src/engine/pipeline/pipeline-bands.ts";
import { runPipeline, type PipelineJob } from "../../src/engine/pipeline/pipeline.ts";
import { createEngine } from "../../src/engine/pipeline/engine.ts";
import { inlineBands } from "../../src/engine/imaging/row-bands.ts";
import type { MaskSession } from "../../src/engine/inference/session.ts";
import { fixture } from "../support/harness.ts";
import { Image } from "imagescript";
import { bandHelperCap } from "../../src/engine/pipeline/pipeline-bands.ts";
import { defaultCodecs } from "../../src/engine/imaging/codecs.ts";

/** A model stand-in whose mask is a soft-edged disc, so every step has edge pixels to work on. */
const discSession: MaskSession = {
  backend: "stub",
  inputSize: { width: 160, height: 120 },
  run: async () => {
    const m = new Uint8Array(160 * 120);
    for (let p = 0; p < m.length; p++) {
      const d = Math.hypot((p % 160) - 80, Math.floor(p / 160) - 60) / 45;
      m[p] = Math.max(0, Math.min(255, Math.round((1.3 - d) * 400)));
    }
    return m;
  },
  dispose: async () => {},
};

let bands: ThreadBands;
before(async () => {
  const started = await startThreadBands(1);
  assert.ok(started, "one helper thread starts");
  bands = started;
});
after(() => bands?.dispose());

test("with a second band thread the PNG is the same bytes as on one thread", async () => {
  assert.equal(bands.parts, 2);
  const cases: Array<[string, PipelineJob["size"], boolean]> = [
    ["photos/rocket.jpg", "full", true],
    ["photos/astronaut.png", "full", false],
    ["photos/chelsea.png", "preview", true],
    ["images/webp-alpha.webp", "full", true],
    ["images/orient-6.jpg", "full", true],
  ];
  for (const [name, size, semitransparency] of cases) {
    const job = () => ({ image: fixture(name), size, semitransparency });
    const one = await runPipeline(job(), discSession, inlineBands);
    const two = await runPipeline(job(), discSession, bands);
    assert.ok(one.ok && two.ok, name);
    assert.ok(Buffer.from(two.png).equals(Buffer.from(one.png)), `${name} ${size}: same PNG`);
    assert.deepEqual(two.foreground, one.foreground, name);
  }
  // The alpha-only output and a background colour take the same path.
  for (const extra of [{ channels: "alpha" as const }, { background: [10, 200, 30, 255] as const }]) {
    const job = () => ({ image: fixture("photos/rocket.jpg"), size: "full" as const, semitransparency: true, ...extra });
    const one = await runPipeline(job(), discSession, inlineBands);
    const two = await runPipeline(job(), discSession, bands);
    assert.ok(one.ok && two.ok);
    assert.ok(Buffer.from(two.png).equals(Buffer.from(one.png)), JSON.stringify(extra));
  }
});

test("a band that throws fails that run, and the next run works", async () => {
  const img = { width: 4, height: 4, data: new Uint8ClampedArray(bands.bytes(64).buffer, 0, 64) };
  // An unknown task: neither this thread nor the helper has it to run.
  await assert.rejects(bands.run("no-such-task" as never, { img } as never, 4), /not a function/);
  assert.equal(bands.parts, 2, "the helper is still there");
  const ok = await runPipeline({ image: fixture("photos/rocket.jpg"), size: "preview", semitransparency: true }, discSession, bands);
  assert.ok(ok.ok);
});

test("memory the helper cannot share is refused before any band runs", async () => {
  const out = new Uint8Array(4 * 4 * 3); // plain memory: the helper's rows would be lost
  const img = { width: 4, height: 4, data: new Uint8ClampedArray(bands.bytes(64).buffer, 0, 64) };
  await assert.rejects(bands.run("modelInput", { img, width: 4, height: 4, out, opaque: true }, 4), /modelInput\.out: a Uint8Array outside shared memory/);
});

test("release() gives the band memory back: the next job takes fresh memory, later jobs reuse it again", async () => {
  const jobBuffer = () => {
    bands.begin();
    return bands.bytes(4096).buffer;
  };
  jobBuffer();
  const kept = jobBuffer();
  assert.equal(jobBuffer(), kept, "a job reuses the memory of the one before");
  bands.release();
  const fresh = jobBuffer();
  assert.notEqual(fresh, kept, "after release() a job takes fresh memory");
  assert.equal(jobBuffer(), jobBuffer(), "and from the job after, memory is reused again");
  // The helpers were told to collect; they still take their pieces of the next run.
  const job = () => ({ image: fixture("photos/rocket.jpg"), size: "full" as const, semitransparency: true });
  const one = await runPipeline(job(), discSession, inlineBands);
  const two = await runPipeline(job(), discSession, bands);
  assert.ok(one.ok && two.ok);
  assert.ok(Buffer.from(two.png).equals(Buffer.from(one.png)));
});

test("a pool worker with two session threads starts one band helper and reports it", async () => {
  for (const [threads, helpers] of [[2, 1], [1, 0]] as const) {
    const engine = createEngine({ poolSize: 1, session: { model: { inputSize: [64, 64] } as never, modelPath: "", backend: "stub", threads, wasmDir: "", stubDelayMs: 0 } });
    try {
      await engine.whenReady();
      const st = engine.state();
      assert.equal(st.bandHelpers, helpers, `threads ${threads}`);
      const r = await engine.run({ image: fixture("photos/rocket.jpg"), size: "full", semitransparency: true });
      assert.ok(r.ok);
    } finally {
      await engine.dispose();
    }
  }
});

/** A JPEG of `w` x `h` with smooth colour and some texture, made here (imagescript). */
async function jpegOf(w: number, h: number): Promise<Uint8Array> {
  const img = new Image(w, h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 4;
      img.bitmap.set([(x * 255) / w, (y * 255) / h, ((x ^ y) & 63) * 4, 255], o);
    }
  }
  return img.encodeJPEG(90);
}

/** `bands` with its beside() counted. */
function countingBeside(b: ThreadBands): ThreadBands & { besides: number } {
  const spy = Object.create(b) as ThreadBands & { besides: number };
  spy.besides = 0;
  spy.beside = (task, args) => {
    spy.besides++;
    return b.beside(task, args);
  };
  return spy;
}

test("the full-size decode beside the model gives the PNG the plain path gives; on by default wherever there is a helper", async () => {
  // 1200 x 800 against the stand-in's 160 x 120 input: the model's input needs 2/8 of it.
  const image = await jpegOf(1200, 800);
  const spy = countingBeside(bands);
  const gpuSession: MaskSession = { ...discSession, backend: "webgpu" };
  for (const channels of [undefined, "alpha" as const]) {
    const job = (overlapDecode?: boolean) => ({ image, size: "full" as const, semitransparency: true, channels, overlapDecode });
    const plain = await runPipeline(job(false), discSession, inlineBands);
    const before = spy.besides;
    const off = await runPipeline(job(false), discSession, spy);
    assert.equal(spy.besides, before, "turned off: the full decode after the model's run");
    const onCpu = await runPipeline(job(), discSession, spy);
    assert.equal(spy.besides, before + 1, "by default: the full decode beside the model");
    const onGpu = await runPipeline(job(), gpuSession, spy);
    assert.equal(spy.besides, before + 2, "on a GPU session too");
    for (const r of [off, onCpu, onGpu]) {
      assert.ok(plain.ok && r.ok);
      assert.deepEqual([r.width, r.height], [1200, 800]);
      assert.ok(Buffer.from(r.png).equals(Buffer.from(plain.png)), `${channels ?? "rgba"}: same PNG`);
    }
  }
  // A picture the model needs all of has no second decode to overlap.
  const before = spy.besides;
  assert.ok((await runPipeline({ image: await jpegOf(160, 120), size: "full", semitransparency: true, overlapDecode: true }, discSession, spy)).ok);
  assert.equal(spy.besides, before);
  // A preview whose output needs more than the model's decode (612 x 408 against 2/8, 300 x 200) gets its own beside it.
  const plainPreview = await runPipeline({ image, size: "preview", semitransparency: true, overlapDecode: false }, discSession, spy);
  const besidePreview = await runPipeline({ image, size: "preview", semitransparency: true, overlapDecode: true }, discSession, spy);
  assert.equal(spy.besides, before + 1);
  assert.ok(plainPreview.ok && besidePreview.ok);
  assert.ok(Buffer.from(besidePreview.png).equals(Buffer.from(plainPreview.png)));
  // Without a helper thread there is nothing to overlap with: the plain path.
  const inline = await runPipeline({ image, size: "full", semitransparency: true, overlapDecode: true }, discSession, inlineBands);
  assert.ok(inline.ok);
});

test("with the decode beside, a truncated JPEG is refused in the same words, and the next job works", async () => {
  const image = await jpegOf(1200, 800);
  const truncated = image.subarray(0, Math.floor(image.length * 0.7));
  const job = (overlapDecode: boolean) => ({ image: truncated, size: "full" as const, semitransparency: true, overlapDecode });
  const [plain, beside] = [await runPipeline(job(false), discSession, bands), await runPipeline(job(true), discSession, bands)];
  assert.ok(!plain.ok && !beside.ok);
  assert.equal(beside.title, plain.title);
  assert.equal(beside.title, "The JPEG file is truncated: its image data ends early");
  assert.ok((await runPipeline({ image, size: "full", semitransparency: true, overlapDecode: true }, discSession, bands)).ok);
});

test("a model run that fails while the full decode runs beside it returns only once that decode is over", async () => {
  const image = await jpegOf(1200, 800);
  const spy = countingBeside(bands);
  let settled = false;
  const watched = Object.create(spy) as ThreadBands;
  watched.beside = (task, args) => {
    const p = spy.beside(task, args);
    void p.then(() => (settled = true), () => (settled = true));
    return p;
  };
  const failing: MaskSession = { ...discSession, run: async () => Promise.reject(new Error("model failed")) };
  await assert.rejects(runPipeline({ image, size: "full", semitransparency: true, overlapDecode: true }, failing, watched), /model failed/);
  assert.equal(spy.besides, 1);
  assert.ok(settled, "the helper's decode into this job's memory was over before the run returned");
  assert.ok((await runPipeline({ image, size: "full", semitransparency: true, overlapDecode: true }, discSession, bands)).ok);
});

test("band helpers are capped by the host's cores, not by a fixed number", () => {
  assert.equal(bandHelperCap(2), 1);
  assert.equal(bandHelperCap(16), 15);
  assert.equal(bandHelperCap(1), 0);
});

test("the model's input comes from a decode at its own need; the output from the same one if it is large enough, else from its own", async () => {
  // The scales this thread's JPEG decoder is asked for, in order.
  const codecs = defaultCodecs();
  const real = codecs.decodeJpeg;
  const asked: number[] = [];
  codecs.decodeJpeg = (bytes, into, eighths) => {
    asked.push(eighths ?? 8);
    return real(bytes, into, eighths);
  };
  try {
    // The model's input is 160 x 120: 1/8 of 1600 x 1200 (200 x 150) has it.
    const image = await jpegOf(1600, 1200);
    // The preview is 577 x 433: 3/8 (600 x 450), decoded after the model's 1/8.
    const preview = await runPipeline({ image, size: "preview", semitransparency: true }, discSession, inlineBands);
    assert.ok(preview.ok);
    assert.deepEqual([preview.width, preview.height], [577, 433]);
    assert.deepEqual(asked, [1, 3]);
    asked.length = 0;
    const full = await runPipeline({ image, size: "full", semitransparency: true }, discSession, inlineBands);
    assert.ok(full.ok);
    assert.deepEqual([full.width, full.height], [1600, 1200]);
    assert.deepEqual(asked, [1, 8]);
    asked.length = 0;
    // A larger model input: 3/8 (600 x 450) has both its 480 x 360 and the preview's 577 x 433.
    const larger: MaskSession = { ...discSession, inputSize: { width: 480, height: 360 }, run: async () => new Uint8Array(480 * 360).fill(200) };
    assert.ok((await runPipeline({ image, size: "preview", semitransparency: true }, larger, inlineBands)).ok);
    assert.deepEqual(asked, [3]);
  } finally {
    codecs.decodeJpeg = real;
  }
});
