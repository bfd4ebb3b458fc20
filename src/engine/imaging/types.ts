// Shared shapes of the imaging module. Kept free of any import so the module can be
// loaded inside a worker thread or by Deno without pulling in the HTTP layer.

export type ImageFormat = "jpeg" | "png" | "webp";

/** EXIF orientation tag values; 1 means "stored upright". */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** 8-bit RGBA pixels, row by row, 4 bytes per pixel, not premultiplied. */
export interface RGBA {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

/**
 * An expected failure about the input image. Structurally the same as `Failure` in
 * src/http/api-error.ts, so the product service can hand it on unchanged; defined
 * here because imaging must not import our HTTP code.
 */
export interface ImagingFailure {
  ok: false;
  code: "invalid_parameter";
  title: string;
  /** What the codec said, for logs only (may name library internals). */
  detail?: string;
}

export function imagingFailure(title: string, detail?: string): ImagingFailure {
  const f: ImagingFailure = { ok: false, code: "invalid_parameter", title };
  if (detail !== undefined) f.detail = detail;
  return f;
}
