// Makes one variant of our int8 model from the fp16 `medium` file, for measuring
// quantisation settings with bench/quality.ts before one goes into models/manifest.json
// (where `derive` makes it at assemble time). Prints the file's size and sha256.
//
// Usage: node scripts/quantise-model.mjs <out.onnx> [--scales per-channel|per-tensor]
//          [--asymmetric] [--keep-float /stage1d/,/side1/] [--from models/isnet-medium.onnx]
//          [--static ranges.json [--calibrate [--photos a.png,b.jpg] [--tail 0.0001]]]
// --static makes the static form (src/engine/assets/quantise-static.ts: QDQ pairs that ORT
// fuses into QLinearConv) from the activation ranges in ranges.json; --calibrate first
// writes that file by running the float model on onnxruntime-node over the photos in
// test/fixtures/photos (or those --photos names), each also mirrored
// (src/engine/assets/quantise-calibrate.ts); ranges are each tensor's min and max, or with
// --tail its tail and 1 − tail points.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { register } from "tsx/esm/api";

register(); // the quantiser is TypeScript (src/engine/assets/quantise*.ts)
const { deriveQuantisedModel } = await import("../src/engine/assets/quantise.ts");

const argv = process.argv.slice(2);
const out = argv[0];
const opts = { scales: "per-channel", symmetric: true, keepFloat: [] };
let from = new URL("../models/isnet-medium.onnx", import.meta.url);
let rangesFile;
let calibrate = false;
let photos;
let tail = 0;
for (let i = 1; i < argv.length; i++) {
  if (argv[i] === "--scales" && ["per-channel", "per-tensor"].includes(argv[i + 1])) opts.scales = argv[++i];
  else if (argv[i] === "--asymmetric") opts.symmetric = false;
  else if (argv[i] === "--keep-float" && argv[i + 1] !== undefined) opts.keepFloat = argv[++i].split(",").filter(Boolean);
  else if (argv[i] === "--from" && argv[i + 1]) from = argv[++i];
  else if (argv[i] === "--static" && argv[i + 1]) rangesFile = argv[++i];
  else if (argv[i] === "--calibrate") calibrate = true;
  else if (argv[i] === "--photos" && argv[i + 1]) photos = argv[++i].split(",").filter(Boolean);
  else if (argv[i] === "--tail" && Number(argv[i + 1]) >= 0 && Number(argv[i + 1]) < 0.5) tail = Number(argv[++i]);
  else {
    console.error(`unknown argument ${argv[i]}`);
    process.exit(2);
  }
}
if (!out || out.startsWith("--") || (calibrate && !rangesFile)) {
  console.error("usage: node scripts/quantise-model.mjs <out.onnx> [--scales per-channel|per-tensor] [--asymmetric] [--keep-float a,b] [--from file] [--static ranges.json [--calibrate [--photos a,b] [--tail f]]]");
  process.exit(2);
}
const fp16 = new Uint8Array(readFileSync(from));
const report = (bytes, what) =>
  console.log(`${out}: ${bytes.length} bytes, sha256 ${createHash("sha256").update(bytes).digest("hex")}; ${what}; ${JSON.stringify(opts)}`);

if (rangesFile) {
  const { prepareStatic, quantiseStatic } = await import("../src/engine/assets/quantise-static.ts");
  if (calibrate) {
    const { calibrateRanges } = await import("../src/engine/assets/quantise-calibrate.ts");
    const { decodeImage } = await import("../src/engine/imaging/decode.ts");
    const { resizeToRGB } = await import("../src/engine/imaging/resize.ts");
    const { rgbToNchw } = await import("../src/engine/inference/tensor.ts");
    const dir = new URL("../test/fixtures/photos/", import.meta.url);
    const inputs = [];
    for (const f of readdirSync(dir).sort().filter((f) => /\.(png|jpe?g|webp)$/i.test(f) && (!photos || photos.includes(f)))) {
      const d = await decodeImage(new Uint8Array(readFileSync(new URL(f, dir))));
      if (!d.ok) throw new Error(`${f}: ${d.title}`);
      const rgb = resizeToRGB(d.image, 1024, 1024);
      const mirrored = new Uint8Array(rgb.length);
      for (let y = 0; y < 1024; y++) for (let x = 0; x < 1024; x++) mirrored.set(rgb.subarray((y * 1024 + 1023 - x) * 3, (y * 1024 + 1024 - x) * 3), (y * 1024 + x) * 3);
      for (const img of [rgb, mirrored]) inputs.push(rgbToNchw(img, 1024, 1024, [0.5, 0.5, 0.5], [1, 1, 1]));
    }
    if (inputs.length === 0) throw new Error(`no calibration photos${photos ? ` named ${photos.join(", ")}` : ""}`);
    // Every tensor of the fully quantised graph, so one file serves any --keep-float.
    const ranges = await calibrateRanges(prepareStatic(fp16, []), inputs, { inputName: "input", dims: [1, 3, 1024, 1024], tail });
    writeFileSync(rangesFile, JSON.stringify(ranges, null, 1) + "\n");
    console.log(`${rangesFile}: ${Object.keys(ranges).length} activation ranges from ${inputs.length} calibration inputs, tail ${tail}`);
  }
  if (!existsSync(rangesFile)) {
    console.error(`${rangesFile} does not exist: add --calibrate to make it`);
    process.exit(2);
  }
  const r = quantiseStatic(prepareStatic(fp16, opts.keepFloat), JSON.parse(readFileSync(rangesFile, "utf8")));
  writeFileSync(out, r.bytes);
  report(r.bytes, `static: ${r.quantised} convolutions quantised, ${r.float} float`);
} else {
  const r = deriveQuantisedModel(fp16, opts);
  writeFileSync(out, r.bytes);
  report(r.bytes, `${r.quantised} convolutions quantised, ${r.float} float`);
}
