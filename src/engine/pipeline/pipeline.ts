// One image through the whole removal: header check → decode → upright → model mask →
// output size → compose (soft alpha, foreground colour) → PNG. Runs inside a pool
// worker (never on the HTTP event loop), and directly in the CLI and the benchmark.
import {
  decodeImage,
  applyOrientation,
  outputSize,
  foregroundBox,
  composeOverColour,
  encodeGreyPng,
  maskUncertainty,
  type Colour,
} from "../imaging/index.ts";
import { encodeRgbaPng } from "../imaging/png-rgba.ts";
import { cutoutInBands, modelInputInBands, resizeImageInBands, shareBytes, shareImage } from "../imaging/cutout-bands.ts";
import { isOpaque } from "../imaging/resample-fast.ts";
import { inlineBands, type RowBands } from "../imaging/row-bands.ts";
import { sizeProblem, type MaskSession } from "../inference/session.ts";
import { modelInputSize } from "../inference/input-side.ts";
import type { Channels, Size } from "../../contract/params.ts";

export interface PipelineJob {
  image: Uint8Array;
  size: Size | undefined;
  semitransparency: boolean;
  /** Absent: rgba. alpha: the mask alone as a greyscale PNG (bg_color then has no effect). */
  channels?: Channels;
  /** Absent: transparent background. */
  background?: Colour;
  /** A square model input side the caller asks for instead of the model's own (src/engine/inference/input-side.ts). */
  inputSide?: number;
}

export interface StageTimings {
  decodeMs: number;
  /** The upright image resized to the model's input (packed RGB). */
  modelInputMs: number;
  /** The session's run alone: tensor in, model, mask out; comparable with bare inference. */
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
  /** In [0, 1]: how unsure the mask is about the outline (src/engine/imaging/uncertainty.ts). */
  uncertainty: number;
  processingMs: number;
  timings: StageTimings;
  /** What the model was fed (src/engine/inference/input-side.ts). */
  modelInput: { width: number; height: number };
  /** The manifest name of the model that made the mask, where the engine knows it (open-engine.ts). */
  model?: string;
}

/** An input problem found while decoding: the client's fault, answered as 400. */
export interface PipelineRejected {
  ok: false;
  code: "invalid_parameter";
  title: string;
  /** Set when the job's own option was refused (the library throws RangeError), not the image. */
  option?: "inputSide";
}

export type PipelineResult = PipelineOk | PipelineRejected;

/**
 * `bands`: where the pixel steps' row bands run (src/engine/imaging/row-bands.ts). A pool
 * worker passes its helper threads; everyone else runs them all here. The bytes out are
 * the same either way.
 */
export async function runPipeline(
  job: PipelineJob,
  session: MaskSession,
  bands: RowBands = inlineBands,
  now: () => number = performance.now.bind(performance),
): Promise<PipelineResult> {
  const t0 = now();
  const fed = modelInputSize(session, job.inputSide);
  if (job.inputSide !== undefined) {
    const problem = sizeProblem(session, fed);
    if (problem) return { ok: false, code: "invalid_parameter", title: `inputSide ${job.inputSide}: ${problem}`, option: "inputSide" };
  }
  bands.begin();
  // decodeImage reads the header first: over 12 MP or unreadable is refused before any pixel is decoded.
  // The pixels go straight into the bands' memory (shared with the helpers, reused job
  // after job), so shareImage has nothing to copy unless the image is turned.
  const decoded = await decodeImage(job.image, { into: (n) => bands.bytes(n) });
  if (!decoded.ok) return { ok: false, code: "invalid_parameter", title: decoded.title };
  const upright = shareImage(applyOrientation(decoded.image, decoded.header.orientation), bands);
  // A JPEG decodes with every alpha 255; other formats are checked, once for both resizes.
  const opaque = decoded.header.format === "jpeg" || isOpaque(upright.data);
  const t1 = now();

  // The model sees the whole upright image at its input size, whatever the tier, so a
  // preview's mask is as good as the full one's, only smaller.
  const { width: mw, height: mh } = fed;
  const modelInput = await modelInputInBands(upright, mw, mh, bands, opaque);
  const t1m = now();
  const mask = await session.run(modelInput, fed);
  const t2 = now();

  const out = outputSize(upright.width, upright.height, job.size);
  // Both buffers are this run's own (the decoded image or its resize, the grown mask), so
  // the cut-out is made in them: the image becomes the cut-out, the mask its alpha.
  const cutout = await resizeImageInBands(upright, out.width, out.height, bands, opaque);
  const alpha = await cutoutInBands(cutout, shareBytes(mask, bands), mw, mh, { semitransparency: job.semitransparency }, bands);
  const foreground = foregroundBox(alpha, out.width, out.height);
  const t3 = now();

  const png =
    job.channels === "alpha"
      ? await encodeGreyPng(out.width, out.height, alpha)
      : await encodeRgbaPng(job.background ? shareImage(composeOverColour(cutout, job.background), bands) : cutout, bands);
  const t4 = now();
  return {
    ok: true,
    png,
    width: out.width,
    height: out.height,
    foreground,
    uncertainty: maskUncertainty(mask),
    processingMs: Math.round(t4 - t0),
    timings: { decodeMs: t1 - t0, modelInputMs: t1m - t1, inferenceMs: t2 - t1m, composeMs: t3 - t2, encodeMs: t4 - t3 },
    modelInput: fed,
  };
}

