// A model for timing only, for a GPU machine the real weights cannot reach: Deno (29 MB
// compressed) and the default model's int8 weights (38 MB compressed: 7 bits of entropy a
// weight, as per-channel int8 is meant to use) do not fit the 64 MiB one call carries.
// The timing model is the default model's own file with every int8 weight code replaced:
// the same graph, operators, shapes, scales and biases, so every kernel does the same work
// on CPU and GPU (dense convolutions take as long whatever the values); only the mask is
// meaningless. Its codes are zeros when carried (the file then packs to under 1 MB) and a
// fixed pseudo-random sequence once filled there. The filled file takes the default's
// place in that machine's models/ folder, and that copy of models/manifest.json gets its
// sha256 and its GPU form's, so `auto`, the first-use derivation and every check run as
// they do for a user.
//   deno run -A bench/timing-model.ts skeleton <int8-static.onnx> <out.onnx>   (here)
//   deno run -A bench/timing-model.ts fill <skeleton.onnx>                      (there)
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DataType, parseModel, writeModel } from "../src/engine/assets/onnx-graph.ts";
import { dequantiseToFloat, type GpuActivations } from "../src/engine/assets/dequantise-float.ts";
import { PACKAGE_MODELS_DIR } from "../src/engine/assets/paths.ts";

const [mode, input, output] = process.argv.slice(2);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function withCodes(bytes: Uint8Array, fill: (raw: Uint8Array) => void): Uint8Array {
  const model = parseModel(bytes);
  for (const t of model.initializers) if (t.dataType === DataType.INT8 && t.raw.length > 64) fill((t.raw = new Uint8Array(t.raw.length)));
  return writeModel(model);
}

if (mode === "skeleton") {
  writeFileSync(output!, withCodes(new Uint8Array(readFileSync(input!)), () => {}));
} else if (mode === "fill") {
  let x = 0x9e3779b9;
  const filled = withCodes(new Uint8Array(readFileSync(input!)), (raw) => {
    for (let i = 0; i < raw.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      raw[i] = (x >>> 0) % 255; // 0..254: int8 codes -128..126
    }
  });
  const manifestPath = join(PACKAGE_MODELS_DIR, "manifest.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const stat = manifest.models["int8-static"];
  const forms = Object.values(manifest.models as Record<string, { gpuFormOf?: string; gpuActivations?: GpuActivations; file: string }>).filter((e) => e.gpuFormOf === "int8-static");
  writeFileSync(join(PACKAGE_MODELS_DIR, stat.file), filled);
  Object.assign(stat, { sha256: sha(filled), bytes: filled.length });
  for (const gpu of forms) {
    const form = dequantiseToFloat(filled, gpu.gpuActivations).bytes;
    Object.assign(gpu, { sha256: sha(form), bytes: form.length });
  }
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  console.log(`timing model: ${stat.file} (${filled.length} bytes, generated int8 codes) and its GPU forms ${forms.map((f) => f.file).join(", ")} (derived on first use) entered in ${manifestPath}`);
} else {
  console.error("usage: timing-model.ts skeleton <in.onnx> <out.onnx> | fill <skeleton.onnx>");
  process.exit(2);
}
