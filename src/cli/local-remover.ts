// The service's pipeline run in this process on the chosen model and backend.
import { availableParallelism } from "node:os";
import { parseColour } from "../imaging/background.ts";
import { resolveModel } from "../inference/manifest.ts";
import { createMaskSession } from "../inference/session.ts";
import { runPipeline } from "../product/pipeline.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../wiring/paths.ts";
import type { RemoveArgs } from "./args.ts";
import type { Remover } from "./remover.ts";

export async function createLocalRemover(a: RemoveArgs): Promise<{ ok: true; remover: Remover } | { ok: false; message: string }> {
  const model = await resolveModel({ model: a.model, modelsDir: PACKAGE_MODELS_DIR });
  if (!model.ok) return { ok: false, message: model.title };
  const session = await createMaskSession({
    model: model.entry,
    modelPath: model.path,
    backend: a.backend,
    threads: a.threads ?? availableParallelism(),
    wasmDir: PACKAGE_WASM_DIR,
  });
  const background = a.bgColor === undefined ? undefined : parseColour(a.bgColor);
  return {
    ok: true,
    remover: {
      async remove(image) {
        const result = await runPipeline({ image, size: a.size, semitransparency: true, channels: a.channels, background }, session);
        return result.ok ? { ok: true, png: result.png } : { ok: false, message: result.title };
      },
      describe: () => `backend ${session.backend}`,
      close: () => session.dispose(),
    },
  };
}
