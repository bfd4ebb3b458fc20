// The speed targets, each a ratio of two times measured in the same run (the machine
// differs from run to run, so only ratios are compared with a target): per request, its
// time over the bare run right before it, then the median of those.
export interface BenchRow {
  backend: string;
  input: string;
  tier: "preview" | "full";
  inferenceMs: number;
  e2eMs: number;
  /** Bare inference of the same backend in the same run. */
  bareMs: number;
  /** Median over the requests of end to end ÷ the bare run right before it. */
  e2eToBare: number;
  /** The same for the pipeline's inference stage. */
  inferenceToBare: number;
}

export interface TargetRow {
  label: string;
  /** Undefined when the run did not measure it (a backend skipped). */
  ratio: number | undefined;
  target: number;
}

const TWELVE_MP = "12 MP JPEG";
const SMALL = "0.4 MP JPEG";

export function targetRows(rows: BenchRow[]): TargetRow[] {
  const find = (backend: string, input = TWELVE_MP, tier: BenchRow["tier"] = "full") =>
    rows.find((r) => r.backend === backend && r.input === input && r.tier === tier);
  const wasm = find("wasm");
  const native = find("native");
  // Inside the pipeline: the worst of the native rows, so no input or tier hides behind another.
  const nativeRows = rows.filter((r) => r.backend === "native");
  const nativeInside = nativeRows.length ? Math.max(...nativeRows.map((r) => r.inferenceToBare)) : undefined;
  return [
    // The stages around the model on WebAssembly (docs/BENCHMARKS.md): a 12 MP preview decodes
    // a fraction of the picture; a full-size cut-out decodes it all; a small one is mostly model.
    { label: "12 MP JPEG, preview, WASM: end to end ÷ bare inference", ratio: find("wasm", TWELVE_MP, "preview")?.e2eToBare, target: 1.03 },
    { label: "12 MP JPEG, full tier, WASM: end to end ÷ bare inference", ratio: wasm?.e2eToBare, target: 1.08 },
    { label: "0.4 MP JPEG (774 × 516), full tier, WASM: end to end ÷ bare inference", ratio: find("wasm", SMALL)?.e2eToBare, target: 1.02 },
    { label: "native: inference inside the pipeline ÷ bare native (worst row)", ratio: nativeInside, target: 1.05 },
    { label: "12 MP JPEG, full tier, native: end to end ÷ bare", ratio: native?.e2eToBare, target: 1.35 },
  ];
}
