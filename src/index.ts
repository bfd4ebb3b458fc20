// The `pixeldrop` package entry: the background-removal engine as a library. It loads
// the engine only (src/engine/: inference, imaging, the pipeline and its worker pool,
// and the API's words in src/contract/), never the service's HTTP, database or mail
// modules; test/library/entry-imports.test.ts checks that.
export { createRemover, removeBackground, type Cutout, type Remover } from "./engine/library/remover.ts";
export { ImageError, InferenceError, type InferenceErrorCode } from "./engine/library/errors.ts";
export type { ImageInput } from "./engine/library/input.ts";
export type { ModelCardInput, PublicBackend, RemoveOptions, RemoverOptions } from "./engine/library/options.ts";
