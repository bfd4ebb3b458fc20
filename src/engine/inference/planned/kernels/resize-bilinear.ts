// Bilinear resize by constant scales, NCHW, as ONNX's Resize (mode "linear") maps an output
// pixel to the input: half_pixel (x + 0.5) / scale − 0.5, pytorch_half_pixel (the same, 0
// for an output of one pixel), align_corners x · (in − 1) / (out − 1), asymmetric x / scale;
// the coordinate is clamped to the input and the two neighbours on each axis weighted.
import type { PlanStep, TensorView } from "../graph-plan.ts";
import type { ResizeCoordinates } from "../graph-program.ts";
import { FLAT_INDEX, HEADER, NCHW_POSITION, PARAM_HEAD, f32Bits, type Kernel } from "./kernel.ts";

type ResizeStep = Extract<PlanStep, { kind: "resize" }>;

const WGSL = /* wgsl */ `${HEADER}
struct Params {
  ${PARAM_HEAD}
  channels: u32, inH: u32, inW: u32, inOff: u32, inBatch: u32,
  outH: u32, outW: u32, outOff: u32, outBatch: u32,
  /** Source coordinate = out × scale + shift (after the mode's arithmetic), per axis. */
  scaleY: f32, shiftY: f32, scaleX: f32, shiftX: f32,
}
@group(0) @binding(2) var<uniform> p: Params;
${FLAT_INDEX}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = flatIndex(id);
  if (i >= p.total) { return; }
${NCHW_POSITION}
  let fy = clamp(f32(oy) * p.scaleY + p.shiftY, 0.0, f32(p.inH - 1u));
  let fx = clamp(f32(ox) * p.scaleX + p.shiftX, 0.0, f32(p.inW - 1u));
  let y0 = u32(floor(fy));
  let x0 = u32(floor(fx));
  let y1 = min(y0 + 1u, p.inH - 1u);
  let x1 = min(x0 + 1u, p.inW - 1u);
  let dy = fy - f32(y0);
  let dx = fx - f32(x0);
  let ch = p.inOff + n * p.inBatch + c * p.inH * p.inW;
  let top = mix(act[ch + y0 * p.inW + x0], act[ch + y0 * p.inW + x1], dx);
  let bottom = mix(act[ch + y1 * p.inW + x0], act[ch + y1 * p.inW + x1], dx);
  act[p.outOff + n * p.outBatch + (c * p.outH + oy) * p.outW + ox] = mix(top, bottom, dy);
}`;

/** The affine map from an output coordinate to the input's on one axis: [scale, shift]. */
export function sourceMap(mode: ResizeCoordinates, scale: number, inLen: number, outLen: number): [number, number] {
  switch (mode) {
    case "align_corners":
      return outLen > 1 ? [(inLen - 1) / (outLen - 1), 0] : [0, 0];
    case "asymmetric":
      return [1 / scale, 0];
    case "pytorch_half_pixel":
      if (outLen <= 1) return [0, 0];
      return [1 / scale, 0.5 / scale - 0.5];
    case "half_pixel":
      return [1 / scale, 0.5 / scale - 0.5];
  }
}

export const resizeBilinear: Kernel<ResizeStep> = {
  name: "resize-bilinear",
  constants: false,
  wgsl: WGSL,
  params({ op, input, output }, pictures) {
    const axis = (s: number, a: TensorView["height"], b: TensorView["height"]) => sourceMap(op.coordinates, s, a, b).map(f32Bits);
    return {
      items: output.channels * output.height * output.width * pictures,
      words: [
        input.channels, input.height, input.width, input.offset, input.batchStride,
        output.height, output.width, output.offset, output.batchStride,
        ...axis(op.scales[0], input.height, output.height), ...axis(op.scales[1], input.width, output.width),
      ],
    };
  },
};
