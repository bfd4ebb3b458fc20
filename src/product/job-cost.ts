// A job's expected work relative to a full-size one, from the image header alone, for
// admission's forecast (admission.ts): the share of the model's full input that this
// picture's input takes (src/engine/inference/input-side.ts). Inference is most of a
// job's time on every backend, and its time follows the input's pixel count.
import { modelInputSize } from "../engine/inference/input-side.ts";
import type { ModelEntry } from "../engine/inference/manifest.ts";

export type JobCost = (width: number, height: number) => number;

export function jobCostFor(entry: Pick<ModelEntry, "inputSize" | "sizes"> | undefined): JobCost {
  if (!entry?.sizes) return () => 1;
  const [height, width] = entry.inputSize;
  const model = { inputSize: { width, height }, sizes: entry.sizes };
  return (w, h) => {
    const fed = modelInputSize(model, { width: w, height: h });
    return (fed.width * fed.height) / (width * height);
  };
}
