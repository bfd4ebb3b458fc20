// Makes one variant of our int8 model from the fp16 `medium` file, for measuring
// quantisation settings with bench/quality.ts before one goes into models/manifest.json
// (where `derive` makes it at assemble time). Prints the file's size and sha256.
//
// Usage: node scripts/quantise-model.mjs <out.onnx> [--scales per-channel|per-tensor]
//          [--asymmetric] [--keep-float /stage1d/,/side1/] [--from models/isnet-medium.onnx]
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { register } from "tsx/esm/api";

register(); // the quantiser is TypeScript (src/engine/assets/quantise.ts)
const { deriveQuantisedModel } = await import("../src/engine/assets/quantise.ts");

const argv = process.argv.slice(2);
const out = argv[0];
const opts = { scales: "per-channel", symmetric: true, keepFloat: [] };
let from = new URL("../models/isnet-medium.onnx", import.meta.url);
for (let i = 1; i < argv.length; i++) {
  if (argv[i] === "--scales" && ["per-channel", "per-tensor"].includes(argv[i + 1])) opts.scales = argv[++i];
  else if (argv[i] === "--asymmetric") opts.symmetric = false;
  else if (argv[i] === "--keep-float" && argv[i + 1] !== undefined) opts.keepFloat = argv[++i].split(",").filter(Boolean);
  else if (argv[i] === "--from" && argv[i + 1]) from = argv[++i];
  else {
    console.error(`unknown argument ${argv[i]}`);
    process.exit(2);
  }
}
if (!out || out.startsWith("--")) {
  console.error("usage: node scripts/quantise-model.mjs <out.onnx> [--scales per-channel|per-tensor] [--asymmetric] [--keep-float a,b] [--from file]");
  process.exit(2);
}
const r = deriveQuantisedModel(new Uint8Array(readFileSync(from)), opts);
writeFileSync(out, r.bytes);
console.log(`${out}: ${r.bytes.length} bytes, sha256 ${createHash("sha256").update(r.bytes).digest("hex")}; ${r.quantised} convolutions quantised, ${r.float} float; ${JSON.stringify(opts)}`);
