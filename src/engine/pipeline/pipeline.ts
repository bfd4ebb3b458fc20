// One image through the whole removal: header check → decode → upright → model mask →
// output size → compose (soft alpha, foreground colour) → PNG. Runs inside a pool
// worker (never on the HTTP event loop), and directly in the CLI and the benchmark.
//
// A JPEG is decoded at the size the work needs (libjpeg's DCT scaling, decode.ts): the
// model's input always comes from the fewest eighths of the picture that still have its
// sides, whatever the tier and the backend, so a preview's mask is the full cut-out's and
// a GPU's is the CPU's. The output comes from that decode when it is large enough (a 12 MP
// preview never decodes 12 MP), else from a second decode at the output's scale, on a band
// helper beside the model's run (overlapDecode; measured in docs/BENCHMARKS.md), or after
// the run where there is no helper.
import {
  decodeImage,
  applyOrientation,
  checkPixelLimit,
  orientedSize,
  readImageHeader,
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
import { decodeEighths, type Sides } from "../imaging/decode.ts";
import type { DecodeSummary } from "../imaging/band-tasks.ts";
import { scaledSide } from "../imaging/codec-jpeg-turbo.ts";
import { sizeProblem, type InputSize, type MaskSession } from "../inference/session.ts";
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
  /**
   * Where the output needs more of a JPEG than the model's input (a full-size cut-out of a
   * picture larger than the model's input): decode the output's scale on a band helper
   * thread while the model runs (default), or after it (false). On a GPU the model's run
   * leaves the cores to us; on WebAssembly with two cores it still paid, the model's run
   * slowing by less than the decode takes (measured, docs/BENCHMARKS.md). Without a helper
   * thread it is always after. The bytes out are the same either way.
   */
  overlapDecode?: boolean;
}

export interface StageTimings {
  /** Decoding, counted where it holds the job up: before the model, and any wait after it for a decode beside it. */
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
  const plan = decodePlan(job.image, fed, job.size);
  // The output's decode beside the model's run starts first, so it overlaps everything up
  // to the compose. Its pixels go to the bands' memory, the bytes it reads too (the helper
  // reads them there; the job's own buffer may be a view of a larger one).
  let beside: { pixels: Uint8Array; done: Promise<DecodeSummary> } | undefined;
  if (plan.output && job.overlapDecode !== false && bands.parts > 1) {
    const pixels = bands.bytes(plan.output.pixels * 4);
    beside = { pixels, done: bands.beside("decode", { bytes: shareBytes(job.image, bands), out: pixels, atLeast: plan.output.atLeast }) };
  }
  try {
    // decodeImage reads the header first: over 12 MP or unreadable is refused before any pixel is decoded.
    // The pixels go straight into the bands' memory (shared with the helpers, reused job
    // after job), so shareImage has nothing to copy unless the image is turned.
    const decoded = await decodeImage(job.image, { into: (n) => bands.bytes(n), atLeast: fed });
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

    // The output's own decode, when the model's was too small for it: done beside the model's run, or now.
    let source = upright;
    if (beside) {
      const second = await beside.done;
      if (!second.ok) return { ok: false, code: "invalid_parameter", title: second.title };
      const stored = { width: second.width, height: second.height, data: new Uint8ClampedArray(beside.pixels.buffer, beside.pixels.byteOffset, beside.pixels.length) };
      source = shareImage(applyOrientation(stored, decoded.header.orientation), bands);
    } else if (plan.output) {
      const second = await decodeImage(job.image, { into: (n) => bands.bytes(n), atLeast: plan.output.atLeast });
      if (!second.ok) return { ok: false, code: "invalid_parameter", title: second.title };
      source = shareImage(applyOrientation(second.image, second.header.orientation), bands);
    }
    const t2d = now();

    // The tier's size is the full picture's, whatever scale it was decoded at.
    const full = orientedSize(decoded.header.width, decoded.header.height, decoded.header.orientation);
    const out = outputSize(full.width, full.height, job.size);
    // Both buffers are this run's own (the decoded image or its resize, the grown mask), so
    // the cut-out is made in them: the image becomes the cut-out, the mask its alpha.
    const cutout = await resizeImageInBands(source, out.width, out.height, bands, opaque);
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
      timings: { decodeMs: t1 - t0 + (t2d - t2), modelInputMs: t1m - t1, inferenceMs: t2 - t1m, composeMs: t3 - t2d, encodeMs: t4 - t3 },
      modelInput: fed,
    };
  } finally {
    // The helper writes into this job's memory until its decode is done, whatever became of
    // the job (a refused image, a failed model run): the next job may not take that memory before.
    await beside?.done.catch(() => {});
  }
}

interface DecodePlan {
  /**
   * The output's own decode, where the model's (decoded at the model's input's need) is
   * too small for the output: what to ask of it (upright) and its pixel count. Undefined:
   * the model's decode serves the output too.
   */
  output: { atLeast: Sides; pixels: number } | undefined;
}

/**
 * What to decode, from the header alone. The model's input always comes from a decode at
 * its own need; the output from the same decode if that is at least the output's size,
 * else from a second one at the output's scale (full size for a full-size cut-out). A
 * header that does not pass (unreadable, over the pixel limit) plans one decode, which
 * then refuses it with the same words.
 */
function decodePlan(image: Uint8Array, fed: InputSize, size: PipelineJob["size"]): DecodePlan {
  const header = readImageHeader(image);
  if (!header.ok || !checkPixelLimit(header).ok) return { output: undefined };
  const upright = orientedSize(header.width, header.height, header.orientation);
  const out = outputSize(upright.width, upright.height, size);
  const forOutput = decodeEighths(header, out);
  if (decodeEighths(header, fed) >= forOutput) return { output: undefined };
  return { output: { atLeast: out, pixels: scaledSide(header.width, forOutput) * scaledSide(header.height, forOutput) } };
}
