// `pixeldrop assemble [int8-static|small|medium|int8 ...]` (default: the default model): builds the model files and the runtime now
// (sha256-checked) instead of on first use, for container images and read-only installs.
import { locateAssets } from "../engine/assets/locate.ts";
import { messageOf } from "../engine/inference/errors.ts";
import { DEFAULT_MODEL } from "../engine/inference/default-model.ts";

export async function assembleCommand(models: string[], log: (s: string) => void): Promise<number> {
  for (const model of models.length ? models : [DEFAULT_MODEL]) {
    try {
      const dirs = await locateAssets({ model });
      log(`pixeldrop: ${model} ready in ${dirs.modelsDir} (runtime in ${dirs.wasmDir})`);
    } catch (err) {
      log(`pixeldrop: ${model}: ${messageOf(err)}`);
      return 1;
    }
  }
  return 0;
}
