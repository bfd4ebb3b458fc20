// The operator forms a quantised IS-Net convolution can take, timed on onnxruntime-web
// (WebAssembly), to choose the form before building a whole model in it:
//
//   dynamic  DynamicQuantizeLinear → ConvInteger → Cast → Mul → Add (the `small` and `int8`
//            models' shape: the activation's range found per image)
//   qlinear  QuantizeLinear → QLinearConv → DequantizeLinear (static: the activation's
//            scale fixed beforehand; int8 weights, one scale per output channel)
//   qdq      the same numbers as Q/DQ pairs around a float Conv, which ORT's QDQ
//            transformer fuses into QLinearConv (NHWC) itself
//
// Two measurements, each form taking turns with the others (the first one rotating) so a
// change in the machine's load hits them alike:
//   - one 128 → 64 3×3 convolution at 512² (`stage1d`'s first, float in and out);
//   - chains of 1 and 4 convolutions 64 → 64 3×3 at 512², each followed by ReLU, where the
//     static form keeps its activations in uint8 between convolutions (ReLU folds into the
//     requantisation); the cost of one more convolution, (chain 4 − chain 1) / 3, is what
//     a model quantised throughout would pay per convolution, without the float boundaries.
// Weights and inputs are fixed pseudo-random numbers: integer kernels take the same time
// whatever the values.
//
// Usage: node --import tsx bench/quality-conv-forms.ts [--threads 2] [--rounds 8] [--cpu]
// --cpu reports the process's CPU time instead of wall time (less moved by other jobs;
// meaningful with --threads 1, since the thread pool's spinning counts as CPU time).
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { DataType } from "../src/engine/assets/onnx-graph.ts";
import { bytesField, intField, msgField, strField, writeFields, type WireField } from "../src/engine/assets/onnx-wire.ts";
import { configureOrtWeb, importOrtWeb, ortWebSessionOptions } from "../src/engine/inference/backend-ort-web.ts";
import { median } from "./median.ts";

type F = WireField;
type Form = "dynamic" | "qlinear" | "qdq";

const SIZE = 512;
const X_SCALE = 8 / 255; // post-ReLU activations in [0, 8), zero point 0
const Y_SCALE = 16 / 255; // a conv output before ReLU in [-8, 8), zero point 128

const intsAttr = (name: string, v: number[]): F[] => [strField(1, name), ...v.map((x) => intField(8, x)), intField(20, 7)];
const intAttr = (name: string, v: number): F[] => [strField(1, name), intField(3, v), intField(20, 2)];
const f32 = (v: ArrayLike<number>) => new Uint8Array(Float32Array.from(v).buffer);
const i32 = (v: ArrayLike<number>) => new Uint8Array(Int32Array.from(v).buffer);

function node(op: string, inputs: string[], outputs: string[], attrs: F[][] = []): F {
  return msgField(1, [
    ...inputs.map((i) => strField(1, i)),
    ...outputs.map((o) => strField(2, o)),
    strField(3, `${op}_${outputs[0]}`),
    strField(4, op),
    ...attrs.map((a) => msgField(5, a)),
  ]);
}

const init = (name: string, type: number, dims: number[], raw: Uint8Array): F =>
  msgField(5, [...dims.map((d) => intField(1, d)), intField(2, type), strField(8, name), bytesField(9, raw)]);

function valueInfo(name: string, dims: number[]): F[] {
  const shape = dims.map((d) => msgField(1, [intField(1, d)]));
  return [strField(1, name), msgField(2, [msgField(1, [intField(1, DataType.FLOAT), msgField(2, shape)])])];
}

function model(body: F[], cin: number, cout: number): Uint8Array {
  const graph = [...body, strField(2, "conv-forms"), msgField(11, valueInfo("x", [1, cin, SIZE, SIZE])), msgField(12, valueInfo("y", [1, cout, SIZE, SIZE]))];
  return writeFields([intField(1, 8), strField(2, "pixeldrop-bench"), msgField(7, graph), msgField(8, [strField(1, ""), intField(2, 13)])]);
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return ((s >>> 8) / 2 ** 24) * 2 - 1;
  };
}

/** A 3×3 conv's int8 weights (He-uniform, so a chain keeps its activations' size) with one symmetric scale per output channel, and its bias. */
function convParams(cin: number, cout: number, seed: number) {
  const r = random(seed);
  const per = cin * 9;
  const codes = new Int8Array(cout * per);
  const scales = new Float32Array(cout);
  for (let o = 0; o < cout; o++) {
    const w = Float32Array.from({ length: per }, () => r() * Math.sqrt(6 / per));
    const amax = w.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    scales[o] = amax / 127;
    for (let i = 0; i < per; i++) codes[o * per + i] = Math.round(w[i]! / scales[o]!);
  }
  const bias = Float32Array.from({ length: cout }, () => r() * 0.1);
  return { dims: [cout, cin, 3, 3], codes, scales, bias };
}

const convAttrs = [intsAttr("kernel_shape", [3, 3]), intsAttr("pads", [1, 1, 1, 1])];

/** One conv in the given form, x → y (relu: ReLU after it). Returns nodes and initializers. */
function conv(form: Form, x: string, y: string, cin: number, cout: number, i: number, relu: boolean): F[] {
  const p = convParams(cin, cout, 1000 * i + cin);
  const t = `_${i}`;
  // The static forms' output: after ReLU the post-ReLU scale (zero point 0), else the wider signed range.
  const [ys, yz] = relu ? ["ax_s", "ax_z"] : [`ys${t}`, `yz${t}`];
  const out: F[] = [];
  if (!relu && form !== "dynamic") out.push(init(`ys${t}`, DataType.FLOAT, [], f32([Y_SCALE])), init(`yz${t}`, DataType.UINT8, [], Uint8Array.of(128)));
  const biasQ = i32(Array.from(p.bias, (b, o) => Math.round(b / (X_SCALE * p.scales[o]!))));
  const w8 = new Uint8Array(p.codes.buffer);
  if (form === "dynamic") {
    const c = relu ? `c${t}` : y;
    out.push(
      node("DynamicQuantizeLinear", [x], [`${x}_q`, `${x}_s`, `${x}_z`]),
      node("ConvInteger", [`${x}_q`, `W${t}`, `${x}_z`, `Wz${t}`], [`i${t}`], convAttrs),
      node("Cast", [`i${t}`], [`f${t}`], [intAttr("to", DataType.FLOAT)]),
      node("Mul", [`${x}_s`, `Ws${t}`], [`xws${t}`]),
      node("Mul", [`f${t}`, `xws${t}`], [`u${t}`]),
      node("Add", [`u${t}`, `B${t}`], [c]),
      ...(relu ? [node("Relu", [c], [y])] : []),
      init(`W${t}`, DataType.UINT8, p.dims, Uint8Array.from(p.codes, (v) => v + 128)),
      init(`Wz${t}`, DataType.UINT8, [], Uint8Array.of(128)),
      init(`Ws${t}`, DataType.FLOAT, [cout, 1, 1], f32(p.scales)),
      init(`B${t}`, DataType.FLOAT, [cout, 1, 1], f32(p.bias)),
    );
    return out;
  }
  const weights = [
    init(`W${t}`, DataType.INT8, p.dims, w8),
    init(`Ws${t}`, DataType.FLOAT, [cout], f32(p.scales)),
    init(`Wz${t}`, DataType.INT8, [cout], new Uint8Array(cout)),
    init(`B${t}`, DataType.INT32, [cout], biasQ),
  ];
  if (form === "qlinear") {
    // Standalone only (float in, float out): QuantizeLinear → QLinearConv → DequantizeLinear.
    out.push(
      node("QuantizeLinear", [x, "ax_s", "ax_z"], [`${x}_q`]),
      node("QLinearConv", [`${x}_q`, "ax_s", "ax_z", `W${t}`, `Ws${t}`, `Wz${t}`, ys, yz, `B${t}`], [`yq${t}`], convAttrs),
      node("DequantizeLinear", [`yq${t}`, ys, yz], [y]),
      ...weights,
    );
    return out;
  }
  // qdq: x is already a float tensor that came out of a Q/DQ pair (or the graph input).
  const c = `c${t}`;
  out.push(
    node("QuantizeLinear", [x, "ax_s", "ax_z"], [`${x}_q`]),
    node("DequantizeLinear", [`${x}_q`, "ax_s", "ax_z"], [`${x}_d`]),
    node("DequantizeLinear", [`W${t}`, `Ws${t}`, `Wz${t}`], [`Wd${t}`], [intAttr("axis", 0)]),
    node("DequantizeLinear", [`B${t}`, `Bs${t}`, `Bz${t}`], [`Bd${t}`], [intAttr("axis", 0)]),
    node("Conv", [`${x}_d`, `Wd${t}`, `Bd${t}`], [c], convAttrs),
    ...(relu ? [node("Relu", [c], [`r${t}`])] : []),
    node("QuantizeLinear", [relu ? `r${t}` : c, ys, yz], [`yq${t}`]),
    node("DequantizeLinear", [`yq${t}`, ys, yz], [y]),
    ...weights,
    init(`Bs${t}`, DataType.FLOAT, [cout], f32(Array.from(p.scales, (s) => s * X_SCALE))),
    init(`Bz${t}`, DataType.INT32, [cout], new Uint8Array(4 * cout)),
  );
  return out;
}

const sharedScales = [init("ax_s", DataType.FLOAT, [], f32([X_SCALE])), init("ax_z", DataType.UINT8, [], Uint8Array.of(0))];

function single(form: Form): Uint8Array {
  return model([...conv(form, "x", "y", 128, 64, 0, false), ...(form === "dynamic" ? [] : sharedScales)], 128, 64);
}

function chain(form: Form, n: number): Uint8Array {
  const body: F[] = form === "dynamic" ? [] : [...sharedScales];
  let x = "x";
  for (let i = 0; i < n; i++) {
    const y = i === n - 1 ? "y" : `a${i}`;
    body.push(...conv(form, x, y, 64, 64, i, true));
    x = y;
  }
  return model(body, 64, 64);
}

// --- timing ---

function parseArgs(argv: string[]) {
  const a = { threads: 2, rounds: 8, cpu: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--threads") a.threads = Number(argv[++i]);
    else if (argv[i] === "--rounds") a.rounds = Number(argv[++i]);
    else if (argv[i] === "--cpu") a.cpu = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!(a.threads >= 1 && a.rounds >= 1)) throw new Error("--threads and --rounds take positive numbers");
  return a;
}

const args = parseArgs(process.argv.slice(2));
const ort = await importOrtWeb("default");
configureOrtWeb(ort, fileURLToPath(new URL("../wasm/", import.meta.url)), args.threads);

function input(channels: number): Float32Array {
  const r = random(channels);
  return Float32Array.from({ length: channels * SIZE * SIZE }, () => Math.max(0, r() * 2.5 + 1.5)); // ReLU-like, a fifth zeros
}

const load = () => loadavg()[0]!.toFixed(2);

/** Runs each graph once per round, in rotating order; returns each one's times (ms). */
async function timeTurns(graphs: Record<string, Uint8Array>, channels: number): Promise<Record<string, number[]>> {
  const names = Object.keys(graphs);
  const sessions = await Promise.all(names.map((n) => ort.InferenceSession.create(graphs[n]!, ortWebSessionOptions("wasm"))));
  const x = new ort.Tensor("float32", input(channels), [1, channels, SIZE, SIZE]);
  const outputs: Float32Array[] = [];
  for (const s of sessions) outputs.push((await s.run({ x })).y!.data as Float32Array); // warm-up
  // The forms of one graph (same name after "×") compute the same function up to rounding
  // (static scales over four layers: a few per cent): a check that the graphs are what they say.
  for (let k = 0; k < outputs.length; k++) {
    const ref = names.findIndex((n) => n.split("×")[1] === names[k]!.split("×")[1]);
    let diff = 0;
    let size = 0;
    for (let i = 0; i < outputs[ref]!.length; i++) {
      diff += Math.abs(outputs[k]![i]! - outputs[ref]![i]!);
      size += Math.abs(outputs[ref]![i]!);
    }
    if (diff > 0.1 * size) throw new Error(`${names[k]} differs from ${names[ref]} by ${((100 * diff) / size).toFixed(1)} %`);
  }
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < args.rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = (j + r) % names.length;
      const wall = performance.now();
      const cpu = process.cpuUsage();
      await sessions[k]!.run({ x });
      const used = process.cpuUsage(cpu);
      times[names[k]!]!.push(args.cpu ? (used.user + used.system) / 1000 : performance.now() - wall);
    }
  }
  await Promise.all(sessions.map((s) => s.release()));
  return times;
}

const what = `${args.threads} thread${args.threads > 1 ? "s" : ""}, ${args.rounds} rounds, ${args.cpu ? "CPU" : "wall"} time (ms)`;

const l0 = load();
const one = await timeTurns({ dynamic: single("dynamic"), qlinear: single("qlinear"), qdq: single("qdq") }, 128);
console.log(`\none conv 128 → 64 3×3 at ${SIZE}², float in and out; ${what}; load ${l0} → ${load()}`);
console.log("| form | median | median of paired ratios to dynamic |\n|---|---|---|");
for (const [name, t] of Object.entries(one)) {
  console.log(`| ${name} | ${median(t).toFixed(0)} | ${median(t.map((v, i) => v / one.dynamic![i]!)).toFixed(3)} |`);
}

const l1 = load();
const ch = await timeTurns({ "dynamic×1": chain("dynamic", 1), "qdq×1": chain("qdq", 1), "dynamic×4": chain("dynamic", 4), "qdq×4": chain("qdq", 4) }, 64);
console.log(`\nchains of convs 64 → 64 3×3 + ReLU at ${SIZE}²; ${what}; load ${l1} → ${load()}`);
const extra = (f: string) => ch[`${f}×4`]!.map((v, i) => (v - ch[`${f}×1`]![i]!) / 3);
console.log("| form | chain of 1 | chain of 4 | one more conv |\n|---|---|---|---|");
for (const f of ["dynamic", "qdq"]) {
  console.log(`| ${f} | ${median(ch[`${f}×1`]!).toFixed(0)} | ${median(ch[`${f}×4`]!).toFixed(0)} | ${median(extra(f)).toFixed(0)} |`);
}
const dyn = extra("dynamic");
console.log(`one more conv, qdq / dynamic: median of paired ratios ${median(extra("qdq").map((v, i) => v / dyn[i]!)).toFixed(3)}`);
console.log(`chain of 4, qdq / dynamic: median of paired ratios ${median(ch["qdq×4"]!.map((v, i) => v / ch["dynamic×4"]![i]!)).toFixed(3)}`);
