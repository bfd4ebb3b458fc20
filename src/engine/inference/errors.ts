// Errors thrown by the inference module. The codes are the catalogue's (src/http/
// error-catalogue.ts) so the product layer can pass them on unchanged; we only repeat the
// literals here because inference must not import the HTTP layer.

export type InferenceErrorCode = "inference_failed" | "model_unavailable" | "shutting_down";

export class InferenceError extends Error {
  readonly code: InferenceErrorCode;
  constructor(code: InferenceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "InferenceError";
    this.code = code;
  }
}

/** A failure as a value, shaped like the HTTP layer's `Failure` so it can be returned as is. */
export interface InferenceFailure {
  ok: false;
  code: InferenceErrorCode;
  title: string;
}

export const inferenceFailure = (code: InferenceErrorCode, title: string): InferenceFailure => ({ ok: false, code, title });

/** The message of anything thrown, for wrapping foreign errors. */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
