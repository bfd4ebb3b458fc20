// Reading the removebg form into the job's parameters: which parts are allowed, which
// values (the words of src/contract/params.ts), and the one failure each rejection
// gives. Shared by the gateway (checks before money moves) and the product service
// (checks again, since it can be deployed on its own). Decisions beyond the spec are
// recorded in docs/DECISIONS.md.
import { fail, type Failure } from "../http/api-error.ts";
import type { Form } from "../http/multipart.ts";
import { CHANNELS, FALSE_WORDS, FORMATS, TRUE_WORDS, TYPES, type Channels } from "../contract/params.ts";
import { isSize, SIZES, type Size } from "../contract/tiers.ts";
import { parseColour, type Colour } from "../engine/imaging/background.ts";

export interface RemoveParams {
  image: Uint8Array;
  /** undefined when the client omitted it (full-resolution tier). */
  size: Size | undefined;
  type: (typeof TYPES)[number];
  format: (typeof FORMATS)[number];
  semitransparency: boolean;
  channels: Channels;
  /** bg_color: the colour the cut-out is laid over; undefined keeps it transparent. */
  background: Colour | undefined;
}

// Parts the mirrored API knows that we deliberately do not support.
const UNSUPPORTED_PARTS = new Set(["image_url", "image_file_b64"]);
const INVALID_PARTS = new Set(["crop_margin"]);
const KNOWN_PARTS = new Set(["image_file", "size", "type", "format", "semitransparency", "crop", "channels", "bg_color"]);
const oneOf = (words: readonly string[], v: string) => words.includes(v);

function textOf(form: Form, name: string): string | undefined | Failure {
  const all = form.getAll(name);
  if (all.length === 0) return undefined;
  if (all.length > 1) return fail("invalid_parameter", `Parameter ${name} was sent more than once`);
  const v = all[0];
  if (typeof v !== "string") return fail("invalid_parameter", `Parameter ${name} must be a text field`);
  return v.trim();
}

const isFailure = (v: unknown): v is Failure =>
  typeof v === "object" && v !== null && (v as Failure).ok === false;

/** Validates the parts of a removebg form. The image bytes are read from the file part. */
export function readRemoveParams(form: Form): ({ ok: true } & RemoveParams) | Failure {
  for (const name of form.names()) {
    if (UNSUPPORTED_PARTS.has(name)) return fail("unsupported_parameter", `Parameter ${name} is not supported; send the image as image_file`);
    if (INVALID_PARTS.has(name)) return fail("invalid_parameter", `Parameter ${name} is not supported`);
    if (!KNOWN_PARTS.has(name)) return fail("unsupported_parameter", `Parameter ${name} is not supported`);
  }

  const size = textOf(form, "size");
  if (isFailure(size)) return size;
  if (size !== undefined && !isSize(size)) {
    return fail("unsupported_parameter", `size must be one of ${SIZES.join(", ")}`);
  }
  const type = textOf(form, "type");
  if (isFailure(type)) return type;
  if (type !== undefined && !oneOf(TYPES, type)) {
    return fail("unsupported_parameter", `type must be ${TYPES.join(" or ")}`);
  }
  const format = textOf(form, "format");
  if (isFailure(format)) return format;
  if (format !== undefined && !oneOf(FORMATS, format)) {
    return fail("unsupported_parameter", `format must be ${FORMATS.join(" or ")}`);
  }
  const crop = textOf(form, "crop");
  if (isFailure(crop)) return crop;
  if (crop !== undefined && !oneOf(FALSE_WORDS, crop.toLowerCase())) {
    return fail("unsupported_parameter", "crop is not supported; omit it or send false");
  }
  const semi = textOf(form, "semitransparency");
  if (isFailure(semi)) return semi;
  let semitransparency = true;
  if (semi !== undefined) {
    const word = semi.toLowerCase();
    if (oneOf(TRUE_WORDS, word)) semitransparency = true;
    else if (oneOf(FALSE_WORDS, word)) semitransparency = false;
    else return fail("invalid_parameter", "semitransparency must be true or false");
  }

  const channels = textOf(form, "channels");
  if (isFailure(channels)) return channels;
  if (channels !== undefined && !oneOf(CHANNELS, channels.toLowerCase())) {
    return fail("invalid_parameter", `channels must be one of ${CHANNELS.join(", ")}`);
  }
  const bg = textOf(form, "bg_color");
  if (isFailure(bg)) return bg;
  const background = bg === undefined || bg === "" ? undefined : parseColour(bg);
  if (bg !== undefined && bg !== "" && !background) {
    return fail("invalid_parameter", "bg_color must be a hex colour (81d4fa, #81d4fa, 81d4fa77) or a CSS colour name");
  }

  const files = form.getAll("image_file");
  if (files.length === 0) return fail("invalid_parameter", "image_file is required");
  if (files.length > 1) return fail("invalid_parameter", "Send exactly one image_file");
  const file = files[0];
  if (typeof file === "string") return fail("invalid_parameter", "image_file must be a file part");
  // A copy, so the image owns its buffer: the in-process product moves it to a worker.
  const image = file.bytes.slice();
  if (image.length === 0) return fail("invalid_parameter", "image_file is empty");

  return {
    ok: true,
    image,
    size: size as Size | undefined,
    type: (type ?? "auto") as RemoveParams["type"],
    format: (format ?? "auto") as RemoveParams["format"],
    semitransparency,
    channels: (channels?.toLowerCase() ?? "rgba") as Channels,
    background,
  };
}
