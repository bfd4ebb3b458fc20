// The planned WebGPU run's plan of the default model's GPU form, without a GPU: every node
// planned (Relu folded into its convolution, every concatenation written in place, so a run
// is 193 dispatches), no two tensors alive at once share arena memory, and a graph with an
// operator the plan lacks is refused with that operator named. The kernels themselves are
// checked against onnxruntime-web's WebGPU provider in test/deno/planned_webgpu_test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_MODELS_DIR } from "../../src/engine/assets/paths.ts";
import { readGraphProgram, type GraphProgram } from "../../src/engine/inference/planned/graph-program.ts";
import { PlanError, planGraph, type PlanStep, type TensorView } from "../../src/engine/inference/planned/graph-plan.ts";

const NAMES = { inputName: "input", outputName: "output" };
const program = (file: string) => readGraphProgram(new Uint8Array(readFileSync(join(PACKAGE_MODELS_DIR, file))), NAMES);

let gpuForm: GraphProgram | undefined;
const form = (): GraphProgram => {
  if (gpuForm) return gpuForm;
  const r = program("isnet-int8-static-gpu.onnx");
  assert.ok(r.ok, r.ok ? "" : r.reason);
  return (gpuForm = r.program);
};

const viewsOf = (s: PlanStep): { reads: TensorView[]; writes: TensorView } =>
  s.kind === "add" ? { reads: [s.a, s.b], writes: s.output } : { reads: [s.input], writes: s.output };

/** The arena intervals a view covers, one a picture. */
const intervals = (v: TensorView, pictures: number): [number, number][] =>
  Array.from({ length: pictures }, (_, n) => [v.offset + n * v.batchStride, v.offset + n * v.batchStride + v.channels * v.height * v.width]);

test("the GPU form is planned whole: Relu in the convolutions, concatenations in place, 193 dispatches", () => {
  const plan = planGraph(form(), 1, 128, 128);
  const kinds = plan.steps.reduce<Record<string, number>>((m, s) => ({ ...m, [s.kind]: (m[s.kind] ?? 0) + 1 }), {});
  assert.deepEqual(kinds, { conv: 114, maxpool: 33, resize: 34, add: 11, unary: 1 });
  assert.equal(plan.steps.filter((s) => s.kind === "conv" && s.op.relu).length, 112);
  assert.deepEqual([plan.output.channels, plan.output.height, plan.output.width], [1, 128, 128]);
});

test("a step never writes over a tensor that a later step still reads (the arena's placement), at 1 and 3 pictures", () => {
  for (const pictures of [1, 3]) {
    const plan = planGraph(form(), pictures, 64, 128);
    // Which step last wrote each arena element (-1: the input, written before the pass).
    const owner = new Int32Array(plan.arenaElements).fill(-2);
    const writes: [number, number][][] = [];
    for (const [a, b] of intervals(plan.input, pictures)) owner.fill(-1, a, b);
    plan.steps.forEach((s, at) => {
      const { reads, writes: out } = viewsOf(s);
      for (const r of reads) {
        for (const [a, b] of intervals(r, pictures)) {
          // Every element read was written, by a step whose whole write lies inside this
          // tensor (its producer, or a part written into it in place), never by another
          // tensor placed over it since.
          for (let i = a; i < b; i++) {
            const w = owner[i]!;
            assert.ok(w !== -2, `step ${at} (${s.kind}) reads element ${i}, which nothing wrote`);
            if (w === -1) continue;
            const inside = writes[w]!.every(([c, d]) => intervals(r, pictures).some(([e, f]) => e <= c && d <= f));
            assert.ok(inside, `step ${at} (${s.kind}) reads element ${i}, last written by step ${w} (${plan.steps[w]!.kind}) for another tensor`);
          }
        }
      }
      writes.push(intervals(out, pictures));
      const overlap = reads.some((r) => intervals(r, pictures).some(([a, b]) => writes[at]!.some(([c, d]) => c < b && a < d)));
      assert.ok(!overlap, `step ${at} (${s.kind}) writes over what it reads`);
      for (const [a, b] of writes[at]!) owner.fill(at, a, b);
    });
    const oneEach = plan.steps.reduce((sum, s) => sum + viewsOf(s).writes.channels * viewsOf(s).writes.height * viewsOf(s).writes.width * pictures, 0);
    assert.ok(plan.arenaElements < oneEach / 2, `the arena (${plan.arenaElements}) reuses memory (a buffer a tensor: ${oneEach})`);
  }
});

test("a size the graph cannot take is a PlanError; an operator the plan lacks is refused by name", () => {
  assert.throws(() => planGraph(form(), 1, 16, 16), PlanError);
  const qdq = program("isnet-int8-static.onnx");
  assert.ok(!qdq.ok && /QuantizeLinear|DequantizeLinear/.test(qdq.reason), qdq.ok ? "planned" : qdq.reason);
});
