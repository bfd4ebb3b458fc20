// One image through the whole removal: header check → decode → upright → model mask →
// output size → compose (soft alpha, foreground colour) → PNG. Runs inside a pool
// worker (never on the HTTP event loop), and directly in the CLI and the benchmark.
//
// A JPEG is decoded at the size the work needs (libjpeg's DCT scaling, decode.ts): the
// model's input and any tier below full size come from the fewest eighths of the picture
// that still have at least the sides they need, so a 12 MP preview never decodes 12 MP. A
// full-size cut-out needs the full decode; where the model leaves the cores free (a GPU),
// that decode runs on a band helper beside the model's run, the model's input coming from
// a reduced decode (overlapDecode; measured in docs/BENCHMARKS.md).
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
import type { ImageHeader } from "../imaging/header.ts";
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
   * For a full-size cut-out of a JPEG that the model's input needs less of: decode the
   * model's input at a reduced scale and the full size on a band helper thread while the
   * model runs. Default: on when the session runs on a GPU (the model's run then leaves
   * the cores to us), off on the CPU, where both would share the same cores (measured,
   * docs/BENCHMARKS.md). Without a helper thread it is always off.
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
  const plan = decodePlan(job, fed, overlapWanted(job, session, bands));
  // The full-size decode beside the model's run starts first, so it overlaps everything
  // up to the compose. Its pixels go to the bands' memory, the bytes it reads too (the
  // helper reads them there; the job's own buffer may be a view of a larger one).
  let beside: { pixels: Uint8Array; done: Promise<DecodeSummary> } | undefined;
  if (plan.beside) {
    const pixels = bands.bytes(plan.beside.width * plan.beside.height * 4);
    beside = { pixels, done: bands.beside("decode", { bytes: shareBytes(job.image, bands), out: pixels }) };
  }
  try {
    // decodeImage reads the header first: over 12 MP or unreadable is refused before any pixel is decoded.
    // The pixels go straight into the bands' memory (shared with the helpers, reused job
    // after job), so shareImage has nothing to copy unless the image is turned.
    const decoded = await decodeImage(job.image, { into: (n) => bands.bytes(n), atLeast: plan.atLeast });
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

    let source = upright;
    if (beside) {
      const full = await beside.done;
      if (!full.ok) return { ok: false, code: "invalid_parameter", title: full.title };
      const stored = { width: full.width, height: full.height, data: new Uint8ClampedArray(beside.pixels.buffer, beside.pixels.byteOffset, beside.pixels.length) };
      source = shareImage(applyOrientation(stored, decoded.header.orientation), bands);
    }
    const t2d = now();

    // The tier's size is the full picture's, whatever scale it was decoded at.
    const out = outputSize(plan.upright.width, plan.upright.height, job.size);
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

/** Whether the job asks for (or its session's backend implies) the full-size decode beside the model, and there is a thread for it. */
function overlapWanted(job: PipelineJob, session: MaskSession, bands: RowBands): boolean {
  return (job.overlapDecode ?? session.backend === "webgpu") && bands.parts > 1;
}

interface DecodePlan {
  /** The picture's full size, upright. */
  upright: Sides;
  /** What the decode before the model must give, upright (decodeImage's atLeast); undefined: full size. */
  atLeast: Sides | undefined;
  /** The full size, as stored, decoded beside the model's run; undefined: no second decode. */
  beside: Sides | undefined;
}

/**
 * What to decode, from the header alone: the model's input and the tier's output both
 * come from one decode at the scale the larger of them needs, unless the output needs the
 * full size while the model's input needs less and `overlap` is on: then the model's input
 * comes from a reduced decode and the full size from a second one beside the model's run.
 * A header that does not pass (unreadable, over the pixel limit) plans a plain decode,
 * which then refuses it with the same words.
 */
function decodePlan(job: PipelineJob, fed: InputSize, overlap: boolean): DecodePlan {
  const header = readImageHeader(job.image);
  if (!header.ok || !checkPixelLimit(header).ok) return { upright: { width: 0, height: 0 }, atLeast: undefined, beside: undefined };
  const upright = orientedSize(header.width, header.height, header.orientation);
  const out = outputSize(upright.width, upright.height, job.size);
  const both = { width: Math.max(fed.width, out.width), height: Math.max(fed.height, out.height) };
  if (!overlap || decodeEighths(header, both) < 8 || decodeEighths(header, fed) === 8) return { upright, atLeast: both, beside: undefined };
  return { upright, atLeast: fed, beside: storedSides(header) };
}

const storedSides = (header: ImageHeader): Sides => ({ width: header.width, height: header.height });
