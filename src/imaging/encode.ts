// The one output format: 8-bit RGBA PNG.
import type { RGBA } from "./types.ts";
import type { Codecs } from "./codec-types.ts";
import { defaultCodecs } from "./codecs.ts";

export async function encodePng(img: RGBA, codecs: Codecs = defaultCodecs()): Promise<Uint8Array> {
  return codecs.encodePng(img);
}
