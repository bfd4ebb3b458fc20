// Convolution, NCHW, one group, any kernel size, stride, dilation and padding, with an
// optional fused Relu. One invocation makes 4 output channels at 4 neighbouring pixels of a
// row: each input value read serves 4 channels, each weight vec4 4 pixels. Weights are
// repacked at load as [outC/4][inC][kh][kw] vec4 (4 output channels side by side, the last
// group padded with zeros), the biases after them as [outC/4] vec4.
import type { ConvWeights } from "../graph-program.ts";
import type { PlanStep } from "../graph-plan.ts";
import { FLAT_INDEX, HEADER, PARAM_HEAD, type Kernel } from "./kernel.ts";

type ConvStep = Extract<PlanStep, { kind: "conv" }>;

const WGSL = /* wgsl */ `${HEADER}
@group(0) @binding(1) var<storage, read> wts: array<vec4<f32>>;
struct Params {
  ${PARAM_HEAD}
  inC: u32, inH: u32, inW: u32, inOff: u32, inBatch: u32,
  outC: u32, outH: u32, outW: u32, outOff: u32, outBatch: u32,
  groups: u32, quads: u32, strideY: u32, strideX: u32, dilY: u32, dilX: u32,
  padT: u32, padL: u32, kh: u32, kw: u32, relu: u32, biasAt: u32,
}
@group(0) @binding(2) var<uniform> p: Params;
${FLAT_INDEX}

fn tap(row: u32, ix: i32) -> f32 {
  if (ix < 0 || ix >= i32(p.inW)) { return 0.0; }
  return act[row + u32(ix)];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = flatIndex(id);
  if (i >= p.total) { return; }
  let quad = i % p.quads;
  let oy = (i / p.quads) % p.outH;
  let g = (i / (p.quads * p.outH)) % p.groups;
  let n = i / (p.quads * p.outH * p.groups);
  let ox = quad * 4u;
  let bias = wts[p.biasAt + g];
  var a0 = bias; var a1 = bias; var a2 = bias; var a3 = bias;
  let plane = p.inH * p.inW;
  let sx = i32(p.strideX);
  for (var ic = 0u; ic < p.inC; ic++) {
    let ch = p.inOff + n * p.inBatch + ic * plane;
    let wAt = (g * p.inC + ic) * p.kh * p.kw;
    for (var ky = 0u; ky < p.kh; ky++) {
      let iy = i32(oy * p.strideY + ky * p.dilY) - i32(p.padT);
      if (iy < 0 || iy >= i32(p.inH)) { continue; }
      let row = ch + u32(iy) * p.inW;
      for (var kx = 0u; kx < p.kw; kx++) {
        let w = wts[wAt + ky * p.kw + kx];
        let ix = i32(ox * p.strideX + kx * p.dilX) - i32(p.padL);
        a0 += w * tap(row, ix);
        a1 += w * tap(row, ix + sx);
        a2 += w * tap(row, ix + 2 * sx);
        a3 += w * tap(row, ix + 3 * sx);
      }
    }
  }
  if (p.relu == 1u) {
    let z = vec4<f32>(0.0);
    a0 = max(a0, z); a1 = max(a1, z); a2 = max(a2, z); a3 = max(a3, z);
  }
  let outPlane = p.outH * p.outW;
  let at = p.outOff + n * p.outBatch + oy * p.outW + ox;
  for (var l = 0u; l < 4u; l++) {
    let oc = g * 4u + l;
    if (oc >= p.outC) { break; }
    let o = at + oc * outPlane;
    act[o] = a0[l];
    if (ox + 1u < p.outW) { act[o + 1u] = a1[l]; }
    if (ox + 2u < p.outW) { act[o + 2u] = a2[l]; }
    if (ox + 3u < p.outW) { act[o + 3u] = a3[l]; }
  }
}`;

/** The weights and biases as the kernel reads them (see above). */
export function packConvWeights(w: ConvWeights): Float32Array {
  const [oc, ic, kh, kw] = w.dims;
  const groups = Math.ceil(oc / 4);
  const taps = ic * kh * kw;
  const out = new Float32Array((groups * taps + groups) * 4);
  for (let o = 0; o < oc; o++) {
    const g = o >> 2;
    const lane = o & 3;
    for (let t = 0; t < taps; t++) out[(g * taps + t) * 4 + lane] = w.values[o * taps + t]!;
    out[(groups * taps + g) * 4 + lane] = w.bias[o]!;
  }
  return out;
}

export const conv2d: Kernel<ConvStep> = {
  name: "conv2d",
  constants: true,
  wgsl: WGSL,
  params({ op, input, output }, pictures) {
    const groups = Math.ceil(output.channels / 4);
    const quads = Math.ceil(output.width / 4);
    const [kh, kw] = op.kernel;
    return {
      items: quads * output.height * groups * pictures,
      words: [
        input.channels, input.height, input.width, input.offset, input.batchStride,
        output.channels, output.height, output.width, output.offset, output.batchStride,
        groups, quads, op.strides[0], op.strides[1], op.dilations[0], op.dilations[1],
        op.pads[0], op.pads[1], kh, kw, op.relu ? 1 : 0, groups * input.channels * kh * kw,
      ],
    };
  },
};
