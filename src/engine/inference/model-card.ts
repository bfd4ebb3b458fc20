// The model card: how to feed an ONNX graph and read its mask, as one JSON document. The
// package's own models are described by cards inside models/manifest.json (with the file's
// hash and origin added, manifest.ts); a model from elsewhere by a card file beside it, a
// preset named by family (card-presets.ts), or an object handed to createRemover. One
// field list (CARD_SHAPE) serves all of them, so a field means the same everywhere.
import { z } from "zod";

const positiveInt = z.number().int().positive();
const triple = z.tuple([z.number(), z.number(), z.number()]);

/** What a card says when it leaves a field out (the fields that are optional in the type). */
export const CARD_DEFAULTS = { channels: "RGB", scale: 255, activation: "none" } as const;

export const CARD_SHAPE = {
  /** The graph input fed the picture; absent: the graph's only input, whatever its name. */
  inputName: z.string().min(1).optional(),
  /** NCHW: planar [1, 3, H, W]; NHWC: interleaved [1, H, W, 3]. */
  layout: z.enum(["NCHW", "NHWC"]).default("NCHW"),
  /** [height, width] the picture is stretched to. */
  inputSize: z.tuple([positiveInt, positiveInt]),
  /**
   * The graph also accepts any height and width that are multiples of `multipleOf` within
   * [min, max] (e.g. MODNet). Parsed and checked against the graph here; which size a run
   * uses is the input-size rule's choice, not the card's.
   */
  sizes: z.strictObject({ multipleOf: positiveInt, min: positiveInt, max: positiveInt }).optional(),
  /** The order of the three channels the graph expects. Default RGB. */
  channels: z.enum(["RGB", "BGR"]).optional(),
  /**
   * What a pixel value is divided by before mean and std: 255, or "max", the picture's own
   * largest value (U²-Net's training code does this; a photo with a white pixel is the same
   * either way). Default 255.
   */
  scale: z.union([z.literal(255), z.literal("max")]).optional(),
  /** Per input channel, in the graph's channel order: (x / scale - mean) / std. */
  mean: triple,
  std: triple.refine((s) => s.every((v) => v > 0), "std must be positive"),
  /** The mask output by name, or by position among the graph's outputs; neither: the first. */
  outputName: z.string().min(1).optional(),
  outputIndex: z.number().int().nonnegative().optional(),
  /** How many outputs the graph has, when the card wants that checked at start. */
  outputCount: positiveInt.optional(),
  /**
   * "sigmoid" when the output is logits; "auto" applies it only to an output with a value
   * outside [0, 1]; "none" (default) when the graph already ends in a sigmoid.
   */
  activation: z.enum(["none", "sigmoid", "auto"]).optional(),
  /**
   * How the output (after the activation) becomes 0..255: "clamp" to [0, 1] and scale, or
   * "minmax" to stretch each mask to its own range (docs/MODEL.md, "Post-processing").
   */
  postprocess: z.enum(["clamp", "minmax"]).default("clamp"),
  /**
   * Where backend "auto" runs this model: "any" takes WebGPU when a hardware adapter exists;
   * "cpu" stays on WebAssembly. The quantised graphs are "cpu": ONNX Runtime's integer
   * kernels exist only on its CPU provider, so on WebGPU every convolution's quantise and
   * dequantise steps leave the GPU (docs/MODEL.md, "WebGPU on a real GPU"). An explicit
   * backend "webgpu" still runs them.
   */
  autoBackend: z.enum(["any", "cpu"]).default("any"),
  /** Shown to whoever runs the model: the weights' licence and its conditions. */
  licence: z.string().min(1),
};

type CardFields = { outputName?: string; outputIndex?: number; inputSize: [number, number]; sizes?: { multipleOf: number; min: number; max: number } };

/** The rules between fields, shared by a card and a manifest entry. */
export function checkCardFields(c: CardFields, ctx: z.RefinementCtx): void {
  if (c.outputName !== undefined && c.outputIndex !== undefined) {
    ctx.addIssue({ code: "custom", path: ["outputIndex"], message: "give outputName or outputIndex, not both" });
  }
  const s = c.sizes;
  if (!s) return;
  if (s.min > s.max) ctx.addIssue({ code: "custom", path: ["sizes", "min"], message: `min ${s.min} is above max ${s.max}` });
  for (const k of ["min", "max"] as const) {
    if (s[k] % s.multipleOf !== 0) ctx.addIssue({ code: "custom", path: ["sizes", k], message: `${s[k]} is not a multiple of ${s.multipleOf}` });
  }
  c.inputSize.forEach((v, i) => {
    if (v % s.multipleOf !== 0 || v < s.min || v > s.max) {
      ctx.addIssue({ code: "custom", path: ["inputSize", i], message: `${v} is not one of the sizes (multiples of ${s.multipleOf} from ${s.min} to ${s.max})` });
    }
  });
}

/** A card document: unknown fields are refused, so a misspelt field is an error, not a silent default. */
export const ModelCardSchema = z.strictObject(CARD_SHAPE).superRefine(checkCardFields);

export type ModelCard = z.output<typeof ModelCardSchema>;

/** A card as a caller writes it: any field may be left to a preset ("preset", card-presets.ts) or its default. */
export type ModelCardInput = Partial<z.input<typeof ModelCardSchema>> & { preset?: string };

/**
 * A card checked against its graph (graph-contract.ts): the input and output are names the
 * graph has. What a session runs; `sha256` when the card came with the file's hash (a
 * manifest entry), so the session checks the bytes it loads.
 */
/** `batches`: the graph's first dim is named on its input and its mask, so one run may take several pictures. */
export type BoundModel = ModelCard & { inputName: string; outputName: string; sha256?: string; batches?: boolean };

/** The card's errors, each with the field it names (`inputSize.0: ...`), or the card. */
export function parseCard(json: unknown, where: string): { ok: true; card: ModelCard } | { ok: false; message: string } {
  const parsed = ModelCardSchema.safeParse(json);
  if (parsed.success) return { ok: true, card: parsed.data };
  const lines = parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(card)"}: ${i.message}`);
  return { ok: false, message: `invalid model card ${where}: ${lines.join("; ")}` };
}
