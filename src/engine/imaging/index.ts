// Public API of the imaging module. Imports nothing of ours outside src/engine/imaging
// but the size tiers (src/contract/tiers.ts), re-exported for the pipeline.
export type { ImageFormat, Orientation, RGBA, ImagingFailure } from "./types.ts";
export { imagingFailure } from "./types.ts";
export { sniffFormat } from "./sniff.ts";
export { readImageHeader, checkPixelLimit, orientedSize, MAX_PIXELS, type ImageHeader } from "./header.ts";
export { decodeImage, MAX_JPEG_SCANS, type DecodeOptions, type DecodeResult } from "./decode.ts";
export { applyOrientation } from "./orient.ts";
export { resizeRGBA, resizeToRGB, resizeMask } from "./resize.ts";
export { outputSize, PREVIEW_MAX_PIXELS, SIZES, type Size, type Tier } from "../../contract/tiers.ts";
export { composeCutout, composeCutoutInPlace, HARD_ALPHA_THRESHOLD, type ComposeOptions } from "./compose.ts";
export { foregroundBox, type Box } from "./bbox.ts";
export { encodePng } from "./encode.ts";
export { createCodecs, defaultCodecs, type Codecs, type CodecOutcome } from "./codecs.ts";
export { parseColour, composeOverColour, type Colour } from "./background.ts";
export { encodeGreyPng } from "./grey-png.ts";
export { maskUncertainty, UNCERTAIN_IN, UNCERTAIN_OUT } from "./uncertainty.ts";
