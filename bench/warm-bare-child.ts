// The warm bare 1024² inference of the default model, for bench/cold.ts's "cold ÷ warm"
// ratio: one plain session (the pipeline's options), a first run left out, the median of
// the next three. Prints one JSON line: { "ms": median }.
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { openBareSession } from "./bare-session.ts";
import { median } from "./median.ts";

const threads = Number(process.argv[2]) || 2;
const bare = await openBareSession({ model: DEFAULT_MODEL, backend: "wasm", threads });
await bare.run(false);
const times: number[] = [];
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  await bare.run(false);
  times.push(performance.now() - t);
}
console.log(JSON.stringify({ ms: median(times) }));
