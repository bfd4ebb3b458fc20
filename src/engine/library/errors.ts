// The library's typed errors. ImageError is the API's 400 invalid_parameter as an
// exception: the same code and the same titles (they come from the one imaging module the
// service uses too), so a developer moving between the library and the API meets the
// same wording. Engine failures (model files missing, a dead worker, a disposed remover)
// are InferenceError, re-exported from the inference module.

export class ImageError extends Error {
  readonly code = "invalid_parameter" as const;
  /** The title the API would answer with for the same image. */
  readonly title: string;
  constructor(title: string) {
    super(title);
    this.name = "ImageError";
    this.title = title;
  }
}

export { InferenceError, type InferenceErrorCode } from "../inference/errors.ts";
