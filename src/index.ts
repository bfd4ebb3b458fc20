// The `pixeldrop` package entry: the background-removal engine as a library. It loads
// the engine only (inference, imaging, the pipeline and its worker pool), never the
// service's HTTP, database or mail modules; test/library/entry-imports.test.ts checks that.
export { createRemover, removeBackground, type Cutout, type Remover } from "./library/remover.ts";
export { ImageError, InferenceError, type InferenceErrorCode } from "./library/errors.ts";
export type { ImageInput } from "./library/input.ts";
export type { PublicBackend, RemoveOptions, RemoverOptions } from "./library/options.ts";
