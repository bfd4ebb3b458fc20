// An Engine wrapper whose behaviour a test scripts while it runs: hold every job at a
// gate until the test opens it (so the test knows exactly which requests got past
// the hold before any of them finishes), and fail chosen jobs the way a dying worker
// does (an InferenceError, which the product answers as 500 inference_failed).
import { InferenceError } from "../../src/engine/inference/errors.ts";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import { createInlineEngine } from "../../src/engine/pipeline/inline-engine.ts";

export interface EngineScript {
  /** Jobs wait at the gate until open() is called. */
  hold: boolean;
  /** Fails the job that entered as number `index` (0-based, counted since reset). */
  fail: (index: number) => boolean;
}

export interface ScriptedEngine extends Engine {
  /** Jobs that reached the engine since the last reset. */
  entered(): number;
  failed(): number;
  /** Lets every held job (and later ones) run. */
  open(): void;
  /** New script, counters to zero, gate closed if the script holds. */
  reset(script?: Partial<EngineScript>, onEnter?: () => void): void;
}

export function scriptedEngine(inner: Engine): ScriptedEngine {
  let script: EngineScript = { hold: false, fail: () => false };
  let entered = 0;
  let failed = 0;
  let onEnter: (() => void) | undefined;
  let gate = Promise.resolve();
  let openGate = () => {};

  return {
    whenReady: () => inner.whenReady(),
    state: () => inner.state(),
    dispose: () => inner.dispose(),
    entered: () => entered,
    failed: () => failed,
    open: () => openGate(),
    reset(next = {}, enter) {
      script = { hold: false, fail: () => false, ...next };
      entered = 0;
      failed = 0;
      onEnter = enter;
      gate = script.hold ? new Promise<void>((r) => (openGate = r)) : Promise.resolve();
      if (!script.hold) openGate = () => {};
    },
    async run(job) {
      const index = entered++;
      onEnter?.();
      await gate;
      if (script.fail(index)) {
        failed++;
        throw new InferenceError("inference_failed", `scripted failure of job ${index}`);
      }
      return inner.run(job);
    },
  };
}

/**
 * The stub model run inline, as makeHarness builds it but with a smaller model input
 * by default (the ellipse mask is resized to the image either way), so hundreds of
 * calls in one suite cost little CPU.
 */
export async function stubInlineEngine(inputSize = 256): Promise<Engine> {
  const session = await createMaskSession({
    model: { inputSize: [inputSize, inputSize] } as never,
    modelPath: "",
    backend: "stub",
    threads: 1,
    wasmDir: "",
    stubDelayMs: 0,
  });
  return createInlineEngine(session);
}
