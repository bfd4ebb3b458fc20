// A tiny graph shaped the way PyTorch's exporter traces IS-Net: its upsamplings are
// Resize nodes whose target size is the traced [H, W] written in as a constant
// (Shape → Slice → Concat with a constant), and besides the mask it returns a coarser
// side output that only training reads. It is what src/engine/assets/size-free.ts
// rewrites, small enough to run in milliseconds:
//
//   input ─ Conv 3x3 /2 ─ Relu (e) ─ MaxPool 2 ─ Conv 1x1 ─ Relu (d) ─ Resize ×2 ─ Add e ─ Conv 1x1 ─ Resize ×2 ─ Sigmoid → output
//                                                               └─ Conv 1x1 ─ Resize ×4 ─ Sigmoid → side
import { DataType } from "../../src/engine/assets/onnx-graph.ts";
import { bytesField, intField, msgField, strField, writeFields } from "../../src/engine/assets/onnx-wire.ts";
import { initializer, intsAttribute, node, valueInfo, weights, type Field } from "./tiny-onnx.ts";

const ATTR_INT = 2;
const ATTR_STRING = 3;
const ATTR_TENSOR = 4;

const intAttribute = (name: string, v: number): Field[] => [strField(1, name), intField(3, v), intField(20, ATTR_INT)];
const stringAttribute = (name: string, v: string): Field[] => [strField(1, name), strField(4, v), intField(20, ATTR_STRING)];

function int64Tensor(name: string, values: number[]): Field[] {
  const raw = new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer);
  return [intField(1, values.length), intField(2, DataType.INT64), strField(8, name), bytesField(9, raw)];
}

/** Resize of `x` to the constant [h, w], traced style; returns its nodes. */
function tracedResize(x: string, out: string, h: number, w: number): Field[] {
  const tensorAttr = [strField(1, "value"), msgField(5, int64Tensor(`${out}_hw`, [h, w])), intField(20, ATTR_TENSOR)];
  return [
    msgField(1, node("Shape", [x], [`${out}_shape`])),
    msgField(1, node("Slice", [`${out}_shape`, "slice_start", "slice_end"], [`${out}_nc`])),
    msgField(1, node("Constant", [], [`${out}_hw`], [tensorAttr])),
    msgField(1, node("Concat", [`${out}_nc`, `${out}_hw`], [`${out}_sizes`], [intAttribute("axis", 0)])),
    msgField(
      1,
      node("Resize", [x, "", "", `${out}_sizes`], [out], [
        stringAttribute("mode", "linear"),
        stringAttribute("coordinate_transformation_mode", "pytorch_half_pixel"),
      ]),
    ),
  ];
}

/** The traced graph at [size, size]; size must be a multiple of 4 (the graph's total stride). `brokenFactor` makes the first upsampling miss a whole factor. */
export function tracedIsNetModel(size: number, opts: { brokenFactor?: boolean } = {}): Uint8Array {
  const c = 4;
  const half = size / 2;
  const one = [intsAttribute("kernel_shape", [1, 1])];
  const graph: Field[] = [
    msgField(1, node("Conv", ["input", "w_in", "b_in"], ["e_c"], [intsAttribute("kernel_shape", [3, 3]), intsAttribute("pads", [1, 1, 1, 1]), intsAttribute("strides", [2, 2])])),
    msgField(1, node("Relu", ["e_c"], ["e"])),
    msgField(1, node("MaxPool", ["e"], ["p"], [intsAttribute("kernel_shape", [2, 2]), intsAttribute("strides", [2, 2]), intAttribute("ceil_mode", 1)])),
    msgField(1, node("Conv", ["p", "w_mid", "b_mid"], ["d_c"], one)),
    msgField(1, node("Relu", ["d_c"], ["d"])),
    ...tracedResize("d", "d_up", opts.brokenFactor ? half + 1 : half, opts.brokenFactor ? half + 1 : half),
    msgField(1, node("Add", ["d_up", "e"], ["sum"])),
    msgField(1, node("Conv", ["sum", "w_out", "b_out"], ["logit_half"], one)),
    ...tracedResize("logit_half", "logit", size, size),
    msgField(1, node("Sigmoid", ["logit"], ["output"])),
    msgField(1, node("Conv", ["p", "w_side", "b_side"], ["side_q"], one)),
    ...tracedResize("side_q", "side_logit", size, size),
    msgField(1, node("Sigmoid", ["side_logit"], ["side"])),
    strField(2, "traced-isnet"),
    msgField(5, initializer("w_in", [c, 3, 3, 3], weights(c * 27, 3))),
    msgField(5, initializer("b_in", [c], weights(c, 5))),
    msgField(5, initializer("w_mid", [c, c, 1, 1], weights(c * c, 7))),
    msgField(5, initializer("b_mid", [c], weights(c, 9))),
    msgField(5, initializer("w_out", [1, c, 1, 1], weights(c, 11).map((w) => w * 3))),
    msgField(5, initializer("b_out", [1], [0.1])),
    msgField(5, initializer("w_side", [1, c, 1, 1], weights(c, 13))),
    msgField(5, initializer("b_side", [1], [0])),
    msgField(5, int64Tensor("slice_start", [0])),
    msgField(5, int64Tensor("slice_end", [2])),
    msgField(11, valueInfo("input", [1, 3, size, size])),
    msgField(12, valueInfo("output", [1, 1, size, size])),
    msgField(12, valueInfo("side", [1, 1, size, size])),
    msgField(13, valueInfo("e", [1, c, half, half])),
  ];
  return writeFields([intField(1, 8), strField(2, "pixeldrop-test"), msgField(7, graph), msgField(8, [strField(1, ""), intField(2, 13)])]);
}
