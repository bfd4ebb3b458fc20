import type { RGBA } from "./types.ts";

/** What a codec backend reports. `reason` is for logs; titles for clients are made in decode.ts. */
export type CodecOutcome =
  | { ok: true; image: RGBA }
  | { ok: false; reason: string; truncated?: boolean };

/**
 * The raw decoders and the encoder behind decodeImage/encodePng. An interface so
 * tests can substitute spies (e.g. to prove an oversized file never reaches one).
 */
export interface Codecs {
  /** Grey and YCbCr/RGB JPEG, baseline or progressive. */
  decodeJpeg(bytes: Uint8Array): Promise<CodecOutcome>;
  /** Four-component (CMYK or YCCK, Adobe-inverted or not) JPEG. */
  decodeCmykJpeg(bytes: Uint8Array): Promise<CodecOutcome>;
  decodePng(bytes: Uint8Array): Promise<CodecOutcome>;
  decodeWebp(bytes: Uint8Array): Promise<CodecOutcome>;
  /** 8-bit RGBA PNG. Throws only on a programming error (inconsistent input). */
  encodePng(image: RGBA): Promise<Uint8Array>;
}

/** A short text for logs from whatever a codec threw. */
export function describeThrown(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`.slice(0, 300);
  if (e && typeof e === "object" && "status" in e) return `exit status ${String((e as { status: unknown }).status)}`;
  return String(e).slice(0, 300);
}
