// Tiny ONNX graphs with the contract of each model family the presets describe
// (src/engine/inference/card-presets.ts): the family's input name, a fixed or symbolic
// size, its number of outputs, and logits or probabilities at the mask output. The mask
// is one 1x1 convolution of the normalised picture (MASK_WEIGHTS, MASK_BIAS), so a test can
// compute the expected mask itself from the picture and the family's published contract;
// the other outputs use other weights, so reading the wrong one shows.
import { DataType } from "../../src/engine/assets/onnx-graph.ts";
import { intField, msgField, strField, writeFields, type WireField } from "../../src/engine/assets/onnx-wire.ts";
import { initializer, node } from "./tiny-onnx.ts";

/** The mask output's 1x1 convolution: z = Σ w[c]·x[c] + b over the three input channels. */
export const MASK_WEIGHTS = [1.5, -1, 0.75] as const;
export const MASK_BIAS = 0.25;

export interface FamilyGraph {
  inputName: string;
  /** A fixed square size, or "dynamic" for symbolic height and width (MODNet). */
  size: number | "dynamic";
  /** Output names, the mask first. */
  outputs: string[];
  /** True: the mask output is the convolution itself (BiRefNet); false: its sigmoid. */
  logits: boolean;
}

function valueInfo(name: string, dims: (number | string)[]): WireField[] {
  const shape = dims.map((d) => msgField(1, [typeof d === "number" ? intField(1, d) : strField(2, d)]));
  return [strField(1, name), msgField(2, [msgField(1, [intField(1, DataType.FLOAT), msgField(2, shape)])])];
}

export function familyGraph(g: FamilyGraph): Uint8Array {
  const [h, w]: (number | string)[] = g.size === "dynamic" ? ["height", "width"] : [g.size, g.size];
  const kernel1x1 = [[strField(1, "kernel_shape"), intField(8, 1), intField(8, 1), intField(20, 7)]]; // AttributeProto: name, ints, type INTS
  const nodes: WireField[] = [];
  const weights: WireField[] = [];
  g.outputs.forEach((out, i) => {
    const wv = i === 0 ? [...MASK_WEIGHTS] : [-1, 0.5 * i, 1];
    weights.push(msgField(5, initializer(`w${i}`, [1, 3, 1, 1], wv)), msgField(5, initializer(`b${i}`, [1], [i === 0 ? MASK_BIAS : -0.5])));
    const conv = i === 0 && g.logits ? out : `z${i}`;
    nodes.push(msgField(1, node("Conv", [g.inputName, `w${i}`, `b${i}`], [conv], kernel1x1)));
    if (conv !== out) nodes.push(msgField(1, node("Sigmoid", [conv], [out])));
  });
  const graph: WireField[] = [
    ...nodes,
    strField(2, "tiny-family"),
    ...weights,
    msgField(11, valueInfo(g.inputName, [1, 3, h!, w!])),
    ...g.outputs.map((o) => msgField(12, valueInfo(o, [1, 1, h!, w!]))),
  ];
  return writeFields([intField(1, 8), strField(2, "pixeldrop-test"), msgField(7, graph), msgField(8, [strField(1, ""), intField(2, 13)])]);
}

/** The families' graphs as the tests use them; each a copy of what the family's exports have (docs/MODEL.md, "Model cards"). */
export const FAMILY_GRAPHS = {
  isnet: { inputName: "input", size: 32, outputs: ["output", ...Array.from({ length: 11 }, (_, i) => `side${i + 2}`)], logits: false },
  "isnet-general-use": { inputName: "input_image", size: 32, outputs: ["output_image", "d2", "d3", "d4", "d5", "d6"], logits: false },
  u2net: { inputName: "input.1", size: 32, outputs: ["1959", "1960", "1961", "1962", "1963", "1964", "1965"], logits: false },
  u2netp: { inputName: "input.1", size: 32, outputs: ["1959", "1960", "1961", "1962", "1963", "1964", "1965"], logits: false },
  birefnet: { inputName: "input_image", size: 32, outputs: ["output_image"], logits: true },
  "birefnet-lite": { inputName: "input_image", size: 32, outputs: ["output_image"], logits: true },
  ben2: { inputName: "input", size: 32, outputs: ["output"], logits: true },
  modnet: { inputName: "input", size: "dynamic", outputs: ["output"], logits: false },
} satisfies Record<string, FamilyGraph>;
