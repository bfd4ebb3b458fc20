// bg_color: reading the colour a client names, and laying a cut-out over it. The
// output stays RGBA; with an opaque colour every pixel comes out opaque.
import { CSS_COLOUR_NAMES } from "./css-colour-names.ts";
import type { RGBA } from "./types.ts";

/** [red, green, blue, alpha], each 0..255. */
export type Colour = readonly [number, number, number, number];

/**
 * Accepts hex with or without '#': rgb, rgba, rrggbb, rrggbbaa (as CSS reads them), or
 * a CSS colour name, in any letter case. Undefined when the text is none of these.
 */
export function parseColour(text: string): Colour | undefined {
  const t = text.trim().toLowerCase();
  if (Object.hasOwn(CSS_COLOUR_NAMES, t)) {
    const v = CSS_COLOUR_NAMES[t]!;
    return [(v >> 16) & 255, (v >> 8) & 255, v & 255, t === "transparent" ? 0 : 255];
  }
  const hex = t.startsWith("#") ? t.slice(1) : t;
  if (!/^[0-9a-f]+$/.test(hex)) return undefined;
  if (hex.length === 3 || hex.length === 4) {
    const d = [...hex].map((c) => parseInt(c + c, 16));
    return [d[0]!, d[1]!, d[2]!, d[3] ?? 255];
  }
  if (hex.length === 6 || hex.length === 8) {
    const d = hex.match(/../g)!.map((p) => parseInt(p, 16));
    return [d[0]!, d[1]!, d[2]!, d[3] ?? 255];
  }
  return undefined;
}

/** The cut-out drawn over a flat colour ("over" compositing, straight alpha). */
export function composeOverColour(img: RGBA, colour: Colour): RGBA {
  const [br, bg, bb, ba] = colour;
  const out = new Uint8ClampedArray(img.data.length);
  const src = img.data;
  const bA = ba / 255;
  for (let i = 0; i < src.length; i += 4) {
    const fA = src[i + 3]! / 255;
    const outA = fA + bA * (1 - fA);
    if (outA === 0) continue; // both transparent: stays 0,0,0,0
    const w = bA * (1 - fA);
    out[i] = (src[i]! * fA + br * w) / outA;
    out[i + 1] = (src[i + 1]! * fA + bg * w) / outA;
    out[i + 2] = (src[i + 2]! * fA + bb * w) / outA;
    out[i + 3] = outA * 255;
  }
  return { width: img.width, height: img.height, data: out };
}
