import type { RGBA } from "./types.ts";
import type { PixelMemory } from "./glue-pixels-into.ts";

/** What a codec backend reports. `reason` is for logs; titles for clients are made in decode.ts. */
export type CodecOutcome =
  | { ok: true; image: RGBA }
  | { ok: false; reason: string; truncated?: boolean };

/**
 * The raw decoders behind decodeImage. An interface so
 * tests can substitute spies (e.g. to prove an oversized file never reaches one).
 */
export interface Codecs {
  /**
   * Grey and YCbCr/RGB JPEG, baseline or progressive. `into`, where a decoder supports
   * it, gives the memory for the pixels (decode.ts's DecodeOptions.into). `eighths`
   * (1..8, default 8): decode at that many eighths of each side (libjpeg's DCT scaling,
   * sides rounded up); a decoder without scaling ignores it, and decode.ts then refuses
   * the size it gets.
   */
  decodeJpeg(bytes: Uint8Array, into?: PixelMemory, eighths?: number): Promise<CodecOutcome>;
  /** Four-component (CMYK or YCCK, Adobe-inverted or not) JPEG. */
  decodeCmykJpeg(bytes: Uint8Array): Promise<CodecOutcome>;
  decodePng(bytes: Uint8Array): Promise<CodecOutcome>;
  decodeWebp(bytes: Uint8Array, into?: PixelMemory): Promise<CodecOutcome>;
  /**
   * Drops what the decoders keep from call to call (instances whose heaps grew to the
   * largest image so far); the next decode starts fresh. Absent: nothing is kept.
   */
  release?(): void;
}

/** A short text for logs from whatever a codec threw. */
export function describeThrown(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`.slice(0, 300);
  if (e && typeof e === "object" && "status" in e) return `exit status ${String((e as { status: unknown }).status)}`;
  return String(e).slice(0, 300);
}
