// One image through the whole removal: header check → decode → upright → model mask →
// output size → compose (soft alpha, foreground colour) → PNG. Runs inside a pool
// worker (never on the HTTP event loop), and directly in the CLI and the benchmark.
import {
  decodeImage,
  applyOrientation,
  resizeRGBA,
  resizeToRGB,
  resizeMask,
  outputSize,
  composeCutout,
  foregroundBox,
  encodePng,
  composeOverColour,
  encodeGreyPng,
  maskUncertainty,
  type Colour,
} from "../imaging/index.ts";
import type { MaskSession } from "../inference/session.ts";
import type { Channels, Size } from "./params.ts";

export interface PipelineJob {
  image: Uint8Array;
  size: Size | undefined;
  semitransparency: boolean;
  /** Absent: rgba. alpha: the mask alone as a greyscale PNG (bg_color then has no effect). */
  channels?: Channels;
  /** Absent: transparent background. */
  background?: Colour;
}

export interface StageTimings {
  decodeMs: number;
  inferenceMs: number;
  composeMs: number;
  encodeMs: number;
}

export interface PipelineOk {
  ok: true;
  png: Uint8Array;
  width: number;
  height: number;
  foreground: { top: number; left: number; width: number; height: number };
  /** In [0, 1]: how unsure the mask is about the outline (src/imaging/uncertainty.ts). */
  uncertainty: number;
  processingMs: number;
  timings: StageTimings;
}

/** An input problem found while decoding: the client's fault, answered as 400. */
export interface PipelineRejected {
  ok: false;
  code: "invalid_parameter";
  title: string;
}

export type PipelineResult = PipelineOk | PipelineRejected;

export async function runPipeline(job: PipelineJob, session: MaskSession, now: () => number = performance.now.bind(performance)): Promise<PipelineResult> {
  const t0 = now();
  // decodeImage reads the header first: over 12 MP or unreadable is refused before any pixel is decoded.
  const decoded = await decodeImage(job.image);
  if (!decoded.ok) return { ok: false, code: "invalid_parameter", title: decoded.title };
  const upright = applyOrientation(decoded.image, decoded.header.orientation);
  const t1 = now();

  // The model sees the whole upright image at its own input size, whatever the tier,
  // so a preview's mask is as good as the full one's, only smaller.
  const { width: mw, height: mh } = session.inputSize;
  const mask = await session.run(resizeToRGB(upright, mw, mh));
  const t2 = now();

  const out = outputSize(upright.width, upright.height, job.size);
  const base = out.width === upright.width && out.height === upright.height ? upright : resizeRGBA(upright, out.width, out.height);
  const alpha = resizeMask(mask, mw, mh, out.width, out.height);
  const cutout = composeCutout(base, alpha, { semitransparency: job.semitransparency });
  const foreground = foregroundBox(alphaOf(cutout), out.width, out.height);
  const t3 = now();

  const png =
    job.channels === "alpha"
      ? await encodeGreyPng(out.width, out.height, alphaOf(cutout))
      : await encodePng(job.background ? composeOverColour(cutout, job.background) : cutout);
  const t4 = now();
  return {
    ok: true,
    png,
    width: out.width,
    height: out.height,
    foreground,
    uncertainty: maskUncertainty(mask),
    processingMs: Math.round(t4 - t0),
    timings: { decodeMs: t1 - t0, inferenceMs: t2 - t1, composeMs: t3 - t2, encodeMs: t4 - t3 },
  };
}

/** The alpha channel of a composed cut-out (hardened when semitransparency is off). */
function alphaOf(img: { width: number; height: number; data: Uint8ClampedArray }): Uint8Array {
  const n = img.width * img.height;
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = img.data[i * 4 + 3];
  return a;
}
