// The product's work on one parsed job, whoever brings it: the in-process gateway
// directly, or the product's HTTP endpoint (app.ts) after reading the form. State,
// header-only size checks, admission to the per-key queue, the engine, the stage times.
import { fail, type Failure } from "../http/api-error.ts";
import type { ByteBudget } from "../http/byte-budget.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import { checkPixelLimit, readImageHeader } from "../engine/imaging/index.ts";
import type { Admission } from "./admission.ts";
import type { Engine } from "../engine/pipeline/engine.ts";
import type { JobRunner, ProductJob, ProductOutcome } from "./job.ts";
import type { StageTimings } from "../engine/pipeline/pipeline.ts";
import { startUpRemainingMs } from "./warm-up.ts";
import { tierOfSize } from "../contract/tiers.ts";

export interface ProductDeps {
  engine: Engine;
  admission: Admission;
  /** What the HTTP endpoint may be receiving at once (the in-process path receives nothing). */
  receiveBudget: ByteBudget;
  now: () => number;
  defaultDeadlineMs: number;
  isShuttingDown: () => boolean;
  log?: (event: Record<string, unknown>) => void;
  /** X-PD-Model on every cut-out: "name/version" of the model the engine runs. */
  /** X-PD-Model for a cut-out made by `model` (a manifest name; undefined: the engine did not say). */
  modelLabel?: (model?: string) => string | undefined;
  /** Where stage times are reported (the metrics); absent in most tests. */
  observe?: ProductObserver;
}

/** What the product service measures, without knowing who records it. Milliseconds. */
export interface ProductObserver {
  stage(stage: "queue_wait" | "decode" | "model_input" | "inference" | "compose" | "encode", ms: number): void;
}

export function createJobRunner(deps: ProductDeps): JobRunner {
  const startedAt = deps.now();
  const maxRetryAfterS = Math.ceil(deps.defaultDeadlineMs / 1000);

  function unavailable(): Failure | undefined {
    if (deps.isShuttingDown()) return fail("shutting_down", undefined, 5);
    const engineState = deps.engine.state();
    if (engineState.ready) return undefined;
    return engineState.failed
      ? fail("model_unavailable", undefined, 30)
      : fail("service_not_ready", undefined, retryAfterSeconds(startUpRemainingMs(deps.now() - startedAt), maxRetryAfterS));
  }

  async function run(job: ProductJob): Promise<ProductOutcome> {
    const refused = unavailable();
    if (refused) return refused;
    // Cheap checks from the header only: a 400 MP claim costs no memory.
    const header = readImageHeader(job.image);
    if (!header.ok) return fail("invalid_parameter", header.title);
    const limit = checkPixelLimit(header);
    if (!limit.ok) return fail("invalid_parameter", limit.title);

    const admitted = deps.admission.admit(job.queueKey, job.deadline, job.callClass, tierOfSize(job.size));
    if (!admitted.ok) return admitted;
    const queuedAt = deps.now();
    // The worker's own time, not the wait for it: this is what admission estimates with.
    let serviceMs: number | undefined;
    try {
      const turn = await admitted.ticket.start();
      if (!turn.ok) return turn;
      const result = await deps.engine.run({
        image: job.image,
        size: job.size,
        semitransparency: job.semitransparency,
        channels: job.channels,
        background: job.background,
      });
      if (!result.ok) return fail(result.code, result.title);
      serviceMs = result.processingMs;
      const label = deps.modelLabel?.(result.model);
      deps.log?.({ msg: "removed", requestId: job.requestId, width: result.width, height: result.height, ...result.timings });
      observeStages(deps.observe, deps.now() - queuedAt, result);
      return {
        ok: true,
        // The PNG arrived from the worker in its own (transferred) ArrayBuffer.
        png: result.png as Uint8Array<ArrayBuffer>,
        width: result.width,
        height: result.height,
        processingMs: result.processingMs,
        foreground: result.foreground,
        ...(label ? { model: label } : {}),
        ...(result.modelInput ? { modelInput: `${result.modelInput.width}x${result.modelInput.height}` } : {}),
        ...(result.uncertainty !== undefined ? { uncertainty: result.uncertainty } : {}),
      };
    } catch (err) {
      deps.log?.({ level: "error", msg: "inference failed", requestId: job.requestId, err: err instanceof Error ? err.message : String(err) });
      return fail("inference_failed", "Processing failed; if it repeats, report the request ID");
    } finally {
      admitted.ticket.done(serviceMs);
    }
  }

  return { unavailable, run };
}

/**
 * The worker measured its own stages; what the job spent beyond them (waiting for a
 * free worker, plus the hand-over to and from it) is the queue wait.
 */
function observeStages(o: ProductObserver | undefined, totalMs: number, r: { processingMs: number; timings: StageTimings }): void {
  if (!o) return;
  o.stage("queue_wait", Math.max(0, totalMs - r.processingMs));
  o.stage("decode", r.timings.decodeMs);
  o.stage("model_input", r.timings.modelInputMs);
  o.stage("inference", r.timings.inferenceMs);
  o.stage("compose", r.timings.composeMs);
  o.stage("encode", r.timings.encodeMs);
}
