// Whether a WebGPU session starts as a planned run: the graph planned whole and its own
// input size prepared on a device of its own. Undefined when it does not (an operator not
// planned, an NHWC card, a device that cannot hold the arena, any start failure): the
// caller then starts onnxruntime-web's WebGPU provider, so nothing here is fatal.
import type { BoundModel } from "../model-card.ts";
import type { TensorRunner } from "../runner.ts";
import { createPlannedRunner, plannedProgram, requestPlannedDevice } from "./planned-runner.ts";

/** Why the last start in this thread did not plan (for diagnosis and the bench), or undefined when it did. */
export let lastPlannedRefusal: string | undefined;

export async function startPlannedRun(bytes: Uint8Array, model: BoundModel): Promise<TensorRunner | undefined> {
  const check = plannedProgram(bytes, model);
  if (!check.ok) {
    lastPlannedRefusal = check.reason;
    return undefined;
  }
  try {
    const runner = await createPlannedRunner(check.program, model, await requestPlannedDevice());
    lastPlannedRefusal = undefined;
    return runner;
  } catch (err) {
    lastPlannedRefusal = err instanceof Error ? err.message : String(err);
    return undefined;
  }
}
