// Models described by a card, under Deno on its WebGPU adapter (here Mesa's lavapipe, a
// software one): each preset's tiny graph (test/support/family-onnx.ts) through the
// library's createRemover with backend webgpu gives the mask WebAssembly gives. That mask
// is checked against each family's contract by test/library/model-cards.test.ts (Node).
// Without an adapter it is skipped with a line naming the packages, unless CI requires it
// (webgpu-gate.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRemover } from "../../dist/index.js";
import { decodeImage, encodePng } from "../../src/engine/imaging/index.ts";
import { FAMILY_GRAPHS, familyGraph } from "../support/family-onnx.ts";
import { maskDifference } from "../support/tiny-onnx.ts";
import { gpuTestIn } from "./webgpu-gate.ts";

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

const SIZE = 32;

gpuTestIn("test/deno/model_cards_test.ts")("every preset's graph runs on WebGPU and gives the WebAssembly mask", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pd-cards-gpu-"));
  try {
    const data = new Uint8ClampedArray(SIZE * SIZE * 4).map((_, i) => (i % 4 === 3 ? 255 : 10 + ((i * 29) % 190)));
    const png = await encodePng({ width: SIZE, height: SIZE, data });
    for (const [family, graph] of Object.entries(FAMILY_GRAPHS)) {
      const model = join(dir, `${family}.onnx`);
      writeFileSync(model, familyGraph(graph));
      const maskWith = async (backend: "webgpu" | "wasm") => {
        await using remover = await createRemover({ backend, model, card: { preset: family, inputSize: [SIZE, SIZE] }, workers: 0, threads: 1 });
        assert(remover.backend === backend, `${family}: asked for ${backend}, got ${remover.backend}`);
        const grey = await decodeImage((await remover.remove(png, { channels: "alpha" })).png);
        assert(grey.ok, "the mask decodes");
        return Uint8Array.from({ length: SIZE * SIZE }, (_, i) => grey.image.data[i * 4]!);
      };
      const cpu = await maskWith("wasm");
      const gpu = await maskWith("webgpu");
      assert(new Set(cpu).size > 20, `${family}: the WebAssembly mask has only ${new Set(cpu).size} levels`);
      const worst = maskDifference(cpu, gpu);
      assert(worst <= 2, `${family}: WebGPU and WebAssembly masks differ by up to ${worst} levels`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
