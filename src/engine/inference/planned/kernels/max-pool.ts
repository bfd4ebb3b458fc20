// Max-pooling, NCHW: one invocation an output value, the largest input value its window
// covers (padding and the part of a ceil-mode window past the edge count as absent).
import type { PlanStep } from "../graph-plan.ts";
import { FLAT_INDEX, HEADER, NCHW_POSITION, PARAM_HEAD, type Kernel } from "./kernel.ts";

type PoolStep = Extract<PlanStep, { kind: "maxpool" }>;

const WGSL = /* wgsl */ `${HEADER}
struct Params {
  ${PARAM_HEAD}
  channels: u32, inH: u32, inW: u32, inOff: u32, inBatch: u32,
  outH: u32, outW: u32, outOff: u32, outBatch: u32,
  kh: u32, kw: u32, strideY: u32, strideX: u32, padT: u32, padL: u32,
}
@group(0) @binding(2) var<uniform> p: Params;
${FLAT_INDEX}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = flatIndex(id);
  if (i >= p.total) { return; }
${NCHW_POSITION}
  let ch = p.inOff + n * p.inBatch + c * p.inH * p.inW;
  var m = -3.402823e38;
  for (var ky = 0u; ky < p.kh; ky++) {
    let iy = i32(oy * p.strideY + ky) - i32(p.padT);
    if (iy < 0 || iy >= i32(p.inH)) { continue; }
    for (var kx = 0u; kx < p.kw; kx++) {
      let ix = i32(ox * p.strideX + kx) - i32(p.padL);
      if (ix < 0 || ix >= i32(p.inW)) { continue; }
      m = max(m, act[ch + u32(iy) * p.inW + u32(ix)]);
    }
  }
  act[p.outOff + n * p.outBatch + (c * p.outH + oy) * p.outW + ox] = m;
}`;

export const maxPool: Kernel<PoolStep> = {
  name: "max-pool",
  constants: false,
  wgsl: WGSL,
  params({ op, input, output }, pictures) {
    return {
      items: output.channels * output.height * output.width * pictures,
      words: [
        input.channels, input.height, input.width, input.offset, input.batchStride,
        output.height, output.width, output.offset, output.batchStride,
        op.kernel[0], op.kernel[1], op.strides[0], op.strides[1], op.pads[0], op.pads[1],
      ],
    };
  },
};
