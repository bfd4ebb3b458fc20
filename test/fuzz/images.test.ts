// Fuzz of the image pipeline with the REAL decoders (MozJPEG, libwebp, the imagescript
// PNG and CMYK JPEG builds) and the stub mask: real fixtures, damaged in every layer
// (image-mutations.ts). Every input must come back as a PNG or as the one input
// failure the product maps to 400 invalid_parameter; never a throw (a 500), never a
// hang. Memory after a full collection must return to where it started.
//
// Short run in CI; `npm run test:fuzz -- --long` (10,000 cases) or CASES=n for more.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { createMaskSession, type MaskSession } from "../../src/engine/inference/session.ts";
import { runPipeline } from "../../src/engine/pipeline/pipeline.ts";
import { decodeImage, readImageHeader } from "../../src/engine/imaging/index.ts";
import { mutatedImage } from "./image-mutations.ts";
import { caseCount, createTally, fuzzSeed, memoryAfterGc } from "./tally.ts";

const CASES = caseCount(150);
/** Generous: the machine is shared and small. A real hang blows far past it. */
const PER_CASE_BOUND_MS = 20_000;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const dir = new URL("../fixtures/images/", import.meta.url);
const sources: Record<string, Uint8Array> = {};
for (const name of readdirSync(dir).sort()) sources[name] = new Uint8Array(readFileSync(new URL(name, dir)));

const tally = createTally(`Image pipeline fuzz (real decoders, stub mask), ${CASES} cases`);
const extra: [string, string][] = [];
after(() => console.log(tally.render(extra)));

async function stubSession(): Promise<MaskSession> {
  return createMaskSession({ model: { inputSize: [64, 64] } as never, modelPath: "", backend: "stub", threads: 1, wasmDir: "", stubDelayMs: 0 });
}

test(`every damaged image gives a PNG or 400 invalid_parameter (${CASES} cases)`, { timeout: 6 * 60 * 60_000 }, async () => {
  const session = await stubSession();
  // Warm the codecs (WASM compile) so the first case's time and the baseline are fair.
  for (const name of ["png-rgb.png", "jpeg-baseline.jpg", "webp-lossy.webp", "jpeg-cmyk-adobe.jpg"]) {
    assert.equal((await runPipeline({ image: sources[name], size: "preview", semitransparency: true }, session)).ok, true, name);
  }
  const before = await memoryAfterGc();

  await fc.assert(
    fc.asyncProperty(mutatedImage(sources), fc.constantFrom("preview" as const, "full" as const, undefined), async (m, size) => {
      const label = `${m.kind} of ${m.source} (${m.bytes.length} B)`;
      const t0 = performance.now();
      // The header reader runs on the HTTP loop in the product service: it must not throw either.
      const header = readImageHeader(m.bytes);
      let result;
      try {
        result = await runPipeline({ image: m.bytes, size, semitransparency: true }, session);
      } catch (err) {
        tally.add(m.kind, "THROWN", performance.now() - t0, label);
        throw new Error(`${label}: the pipeline threw (a 500): ${err instanceof Error ? err.stack : String(err)}`);
      }
      const ms = performance.now() - t0;
      if (result.ok) {
        tally.add(m.kind, "200 png", ms, label);
        assert.ok(header.ok, `${label}: decoded although the header reader refused it`);
        assert.deepEqual([...result.png.subarray(0, 8)], PNG_SIGNATURE, label);
        assert.ok(result.width >= 1 && result.height >= 1 && result.width * result.height <= 12_000_000, label);
      } else {
        tally.add(m.kind, `400 ${result.code}`, ms, label);
        assert.equal(result.code, "invalid_parameter", label);
        assert.equal(typeof result.title, "string", label);
        assert.ok(result.title.length > 0 && result.title.length < 300, `${label}: title ${result.title}`);
      }
      assert.ok(ms < PER_CASE_BOUND_MS, `${label} took ${ms.toFixed(0)} ms`);
    }),
    { numRuns: CASES, seed: fuzzSeed(), endOnFailure: true },
  );

  const afterRun = await memoryAfterGc();
  extra.push(
    ["heap after GC, before → after (MB)", `${before.heapMb.toFixed(1)} → ${afterRun.heapMb.toFixed(1)}`],
    ["RSS after GC, before → after (MB)", `${before.rssMb.toFixed(1)} → ${afterRun.rssMb.toFixed(1)}`],
    ["collected with --expose-gc", String(afterRun.gc)],
  );
  if (afterRun.gc) {
    // Every case allocates fresh WASM instances and pixel buffers; none may be kept.
    assert.ok(afterRun.heapMb - before.heapMb < 32, `heap grew from ${before.heapMb.toFixed(1)} to ${afterRun.heapMb.toFixed(1)} MB`);
  }
});

test("a 400-byte JPEG declaring 12 MP is refused as truncated (found by this fuzz: it used to cost a full decode)", async () => {
  const b = sources["orient-3.jpg"]!.slice();
  // Rewrite the frame header (SOF0) to 3464 x 3464, keeping the 400 bytes of data.
  let at = 2;
  while (b[at + 1] !== 0xc0) at += 2 + ((b[at + 2]! << 8) | b[at + 3]!);
  b.set([3464 >> 8, 3464 & 0xff, 3464 >> 8, 3464 & 0xff], at + 5);
  const t0 = performance.now();
  const r = await decodeImage(b);
  // The time goes to the table only (no timing assertions in tests): it was about 0.9 s, now tens of ms.
  extra.push(["400 B JPEG declaring 3464 × 3464: decode refused after (ms)", (performance.now() - t0).toFixed(0)]);
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.title : "", /truncated/);
});
