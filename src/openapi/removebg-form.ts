// The multipart form of POST /v1.0/removebg as a JSON Schema. Every value comes from
// the code that enforces it (the form's words from src/contract/params.ts, sizes and
// tiers from src/contract/tiers.ts, prices, limits); test/openapi/form.test.ts checks
// it against the running app by sending every documented value and a wrong one.
// `x-pd-rejected` names the answer a wrong value (or, for unsupported parts, any
// value) gets.
import { FULL_PRICE_KRW, PREVIEW_PRICE_KRW } from "../billing/prices.ts";
import { MAX_BODY_BYTES } from "../http/read-body.ts";
import { MAX_PIXELS } from "../engine/imaging/header.ts";
import { FULL_SIZES, PREVIEW_MAX_PIXELS, PREVIEW_SIZES } from "../contract/tiers.ts";
import { UNCERTAIN_IN, UNCERTAIN_OUT } from "../engine/imaging/uncertainty.ts";
import { CHANNELS, FALSE_WORDS, FORMATS, SIZES, TRUE_WORDS, TYPES } from "../contract/params.ts";
import { TEST_KEY_SIZE } from "../gateway/test-key.ts";
import type { JsonSchema } from "./model.ts";

const rejected = (status: number, code: string) => ({ "x-pd-rejected": { status, code } });

export const REMOVEBG_FORM: JsonSchema = {
  type: "object",
  required: ["image_file"],
  additionalProperties: false,
  description:
    `One image per request, as a multipart part. The whole body is at most ${MAX_BODY_BYTES.toLocaleString("en")} bytes ` +
    `(413 file_too_large) and the image at most ${MAX_PIXELS.toLocaleString("en")} pixels (400 invalid_parameter). ` +
    "Each part at most once (400 invalid_parameter). Parts not listed here: 400 unsupported_parameter.",
  properties: {
    image_file: {
      type: "string",
      contentMediaType: "application/octet-stream",
      description:
        "The image: PNG, JPEG or WebP, recognised from its bytes (the file name and part type are not used), " +
        "not empty, sent as a file part, readable.",
      ...rejected(400, "invalid_parameter"),
    },
    size: {
      type: "string",
      enum: [...SIZES],
      description:
        `${PREVIEW_SIZES.join(", ")}: preview tier (at most ${PREVIEW_MAX_PIXELS / 1_000_000} MP output), ${PREVIEW_PRICE_KRW} KRW. ` +
        `${FULL_SIZES.join(", ")} or omitted: full resolution, ${FULL_PRICE_KRW} KRW reserved, charged by output pixels ` +
        `(≤ ${PREVIEW_MAX_PIXELS.toLocaleString("en")} px: ${PREVIEW_PRICE_KRW} KRW). A test key always gets ${TEST_KEY_SIZE}.`,
      ...rejected(400, "unsupported_parameter"),
    },
    type: { type: "string", enum: [...TYPES], default: "auto", description: "Accepted for compatibility; does not change the result.", ...rejected(400, "unsupported_parameter") },
    format: { type: "string", enum: [...FORMATS], default: "auto", description: "The result is always PNG.", ...rejected(400, "unsupported_parameter") },
    semitransparency: {
      type: "string",
      enum: [...TRUE_WORDS, ...FALSE_WORDS],
      default: "true",
      description: "Keep soft (partly transparent) edges. Any case.",
      ...rejected(400, "invalid_parameter"),
    },
    crop: {
      type: "string",
      enum: [...FALSE_WORDS],
      description: "Cropping is not supported: omit it or send false (`true` is refused). Any case.",
      ...rejected(400, "unsupported_parameter"),
    },
    channels: {
      type: "string",
      enum: [...CHANNELS],
      default: "rgba",
      description:
        "Beyond the spec, as the mirrored API has it. rgba: the cut-out. alpha: the mask alone as an 8-bit greyscale PNG, " +
        "equal to the alpha channel of the rgba result (hardened too when semitransparency is false); bg_color then has no effect. " +
        "Any case. Same price tiers.",
      ...rejected(400, "invalid_parameter"),
    },
    bg_color: {
      type: "string",
      examples: ["81d4fa", "#81d4fa", "81d4fa77", "#f00", "rebeccapurple"],
      description:
        "Beyond the spec, as the mirrored API has it. The cut-out is laid over this colour: hex with or without '#' " +
        "(rgb, rgba, rrggbb, rrggbbaa) or a CSS colour name, any case. An opaque colour gives an opaque result; " +
        "with alpha, the background keeps that transparency. Empty: no background. Same price tiers.",
      ...rejected(400, "invalid_parameter"),
    },
    crop_margin: { not: {}, description: "Not supported.", ...rejected(400, "invalid_parameter") },
    image_url: { not: {}, description: "Not supported: send the image as image_file.", ...rejected(400, "unsupported_parameter") },
    image_file_b64: { not: {}, description: "Not supported: send the image as image_file.", ...rejected(400, "unsupported_parameter") },
  },
};
