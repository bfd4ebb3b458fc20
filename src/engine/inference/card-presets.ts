// Cards for the model families people download elsewhere, by family name, so a user names
// the family instead of writing a card. Each contract is taken from the family's own
// inference code (docs/MODEL.md, "Model cards", gives the source of each and the tests
// that cover them). Input and output names are left out: exports of the same weights name
// them differently, so a preset takes the graph's only input and its first output.
// A card document may start from a preset and change fields: { "preset": "birefnet",
// "inputSize": [512, 512] }.
import type { z } from "zod";
import { parseCard, type ModelCard, type ModelCardSchema } from "./model-card.ts";

type Preset = Omit<z.input<typeof ModelCardSchema>, "inputName" | "outputName">;

type Norm = Pick<Preset, "mean" | "std">;
const IMAGENET: Norm = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
const HALF_ONE: Norm = { mean: [0.5, 0.5, 0.5], std: [1, 1, 1] };

const DIS_LICENCE =
  "IS-Net weights from xuebinqin/DIS: Apache-2.0. Check the licence of the file you use: BRIA RMBG-1.4, an IS-Net-architecture model, is non-commercial.";
const U2NET_LICENCE = "U²-Net weights from xuebinqin/U-2-Net: Apache-2.0.";
const BIREFNET_LICENCE =
  "BiRefNet weights from ZhengPeng7/BiRefNet: MIT. Check the licence of the file you use: BRIA RMBG-2.0, a BiRefNet-architecture model, is non-commercial.";

export const PRESETS = {
  /** Ours: IS-Net as IMG.LY convert it (models/manifest.json); the graph ends in a sigmoid. */
  isnet: {
    inputSize: [1024, 1024],
    ...HALF_ONE,
    licence:
      "IS-Net weights from xuebinqin/DIS (Apache-2.0) as converted in @imgly/background-removal-data (AGPL-3.0 as distributed there). See docs/MODEL.md.",
  },
  /** DIS's isnet-general-use: x/255, mean 0.5, std 1; the side outputs are sigmoids, the first is the finest. */
  "isnet-general-use": { inputSize: [1024, 1024], ...HALF_ONE, licence: DIS_LICENCE },
  /** U²-Net: 320², divided by the picture's maximum (its data loader's ToTensorLab), ImageNet mean and std; seven sigmoid outputs, d0 first. */
  u2net: { inputSize: [320, 320], scale: "max", ...IMAGENET, licence: U2NET_LICENCE },
  u2netp: { inputSize: [320, 320], scale: "max", ...IMAGENET, licence: U2NET_LICENCE },
  /** BiRefNet: 1024², x/255 with ImageNet mean and std; the last output is logits (its inference code applies the sigmoid). */
  birefnet: { inputSize: [1024, 1024], ...IMAGENET, activation: "sigmoid", autoBackend: "any", licence: BIREFNET_LICENCE },
  "birefnet-lite": { inputSize: [1024, 1024], ...IMAGENET, activation: "sigmoid", licence: BIREFNET_LICENCE },
  /**
   * BEN2 as rembg feeds it: 1024², mean 0.5, std 1. Whether an export ends in a sigmoid
   * was not checked here, so "auto" applies one only to an output outside [0, 1].
   */
  ben2: {
    inputSize: [1024, 1024],
    ...HALF_ONE,
    activation: "auto",
    licence: "BEN2 base weights from PramaLLC/BEN2: its model page says MIT (not verified here); check the licence of the file you use.",
  },
  /** MODNet: any size that is a multiple of 32 (512 is its reference), (x/255 - 0.5)/0.5; the matte is in [0, 1]. */
  modnet: {
    inputSize: [512, 512],
    sizes: { multipleOf: 32, min: 32, max: 2048 },
    mean: [0.5, 0.5, 0.5],
    std: [0.5, 0.5, 0.5],
    licence: "MODNet weights from ZHKKKe/MODNet: Apache-2.0.",
  },
} satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export const isPresetName = (s: string): s is PresetName => Object.hasOwn(PRESETS, s);

/**
 * A card from a document (a parsed card file, or an object a caller passed): a "preset"
 * field starts it from that family's card, the document's other fields override it.
 */
export function cardFromDocument(doc: unknown, where: string): { ok: true; card: ModelCard } | { ok: false; message: string } {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return { ok: false, message: `invalid model card ${where}: not a JSON object` };
  const { preset, ...rest } = doc as Record<string, unknown>;
  if (preset === undefined) return parseCard(rest, where);
  if (typeof preset !== "string" || !isPresetName(preset)) {
    return { ok: false, message: `invalid model card ${where}: preset: must be one of ${PRESET_NAMES.join(", ")}` };
  }
  return parseCard({ ...PRESETS[preset], ...rest }, where);
}

/** The card of a preset by name. */
export function presetCard(name: PresetName): ModelCard {
  const parsed = parseCard(PRESETS[name], `preset ${name}`);
  if (!parsed.ok) throw new Error(parsed.message); // the presets are ours: a test parses every one
  return parsed.card;
}
