// The internal product endpoint: the same multipart request as the public one, already
// authorised and paid for by the gateway. Answers the PNG or a product error.
import { Hono } from "hono";
import { fail, type Failure } from "../http/api-error.ts";
import { failureResponse } from "../http/error-response.ts";
import { H, imageHeaders } from "../http/headers.ts";
import { PRODUCT_PATH } from "../http/product-path.ts";
import { newRequestId } from "../http/request-id.ts";
import { MAX_BODY_BYTES, parseMultipart, readBodyCapped, announcedLength } from "../http/read-body.ts";
import type { ByteBudget } from "../http/byte-budget.ts";
import { readImageHeader, checkPixelLimit } from "../imaging/index.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import { isCallClass } from "../limits/test-share.ts";
import type { Admission } from "./admission.ts";
import type { Engine } from "./engine.ts";
import { isSize } from "../imaging/tiers.ts";
import { readRemoveParams } from "./params.ts";
import type { StageTimings } from "./pipeline.ts";
import { startUpRemainingMs } from "./warm-up.ts";

export { PRODUCT_PATH };

export interface ProductDeps {
  engine: Engine;
  admission: Admission;
  receiveBudget: ByteBudget;
  now: () => number;
  defaultDeadlineMs: number;
  isShuttingDown: () => boolean;
  log?: (event: Record<string, unknown>) => void;
  /** X-PD-Model on every cut-out: "name/version" of the model the engine runs. */
  modelLabel?: string;
  /** Where stage times are reported (the metrics); absent in most tests. */
  observe?: ProductObserver;
}

/** What the product service measures, without knowing who records it. Milliseconds. */
export interface ProductObserver {
  stage(stage: "queue_wait" | "decode" | "inference" | "compose" | "encode", ms: number): void;
}

export function createProductApp(deps: ProductDeps): Hono {
  const app = new Hono();
  const startedAt = deps.now();
  const maxRetryAfterS = Math.ceil(deps.defaultDeadlineMs / 1000);
  app.post(PRODUCT_PATH, async (c) => {
    const req = c.req.raw;
    const requestId = req.headers.get(H.requestId) ?? newRequestId(deps.now());
    const reply = (f: Failure) => failureResponse(requestId, f);

    if (deps.isShuttingDown()) return reply(fail("shutting_down", undefined, 5));
    const engineState = deps.engine.state();
    if (!engineState.ready) {
      return reply(engineState.failed ? fail("model_unavailable", undefined, 30) : fail("service_not_ready", undefined, retryAfterSeconds(startUpRemainingMs(deps.now() - startedAt), maxRetryAfterS)));
    }
    if (new URL(req.url).search !== "") return reply(fail("unsupported_parameter", "A query string is not accepted"));

    const expected = Math.min(announcedLength(req) ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
    if (!deps.receiveBudget.tryTake(expected)) {
      return reply(fail("receive_budget_exhausted", undefined, retryAfterSeconds(deps.receiveBudget.untilRoomMs(expected), maxRetryAfterS)));
    }
    let params;
    try {
      const body = await readBodyCapped(req, MAX_BODY_BYTES);
      if (!body.ok) return reply(body);
      const form = await parseMultipart(body.bytes, req.headers.get("content-type"));
      if (!form.ok) return reply(form);
      params = await readRemoveParams(form.form);
      if (!params.ok) return reply(params);
    } finally {
      deps.receiveBudget.give(expected);
    }

    // The gateway's choice of size for the key (src/gateway/test-key.ts), when it made one.
    const forced = req.headers.get(H.forceSize);
    const size = forced !== null && isSize(forced) ? forced : params.size;

    // Cheap checks from the header only: a 400 MP claim costs no memory.
    const header = readImageHeader(params.image);
    if (!header.ok) return reply(fail("invalid_parameter", header.title));
    const limit = checkPixelLimit(header);
    if (!limit.ok) return reply(fail("invalid_parameter", limit.title));

    const deadlineRaw = Number(req.headers.get(H.deadline));
    const deadline = Number.isFinite(deadlineRaw) && deadlineRaw > 0 ? deadlineRaw : deps.now() + deps.defaultDeadlineMs;
    const callClass = req.headers.get(H.callClass);
    const kind = isCallClass(callClass) ? callClass : "live";
    const admitted = deps.admission.admit(req.headers.get(H.queueKey) ?? "anonymous", deadline, kind);
    if (!admitted.ok) return reply(admitted);

    const queuedAt = deps.now();
    // The worker's own time, not the wait for it: this is what admission estimates with.
    let serviceMs: number | undefined;
    try {
      const turn = await admitted.ticket.start();
      if (!turn.ok) return reply(turn);
      const result = await deps.engine.run({
        image: params.image,
        size,
        semitransparency: params.semitransparency,
        channels: params.channels,
        background: params.background,
      });
      if (!result.ok) return reply(fail(result.code, result.title));
      serviceMs = result.processingMs;
      const durationMs = deps.now() - queuedAt;
      deps.log?.({ msg: "removed", requestId, width: result.width, height: result.height, ...result.timings });
      observeStages(deps.observe, durationMs, result);
      // The PNG arrived from the worker in its own (transferred) ArrayBuffer.
      return new Response(result.png as Uint8Array<ArrayBuffer>, {
        status: 200,
        headers: { "content-type": "image/png", ...imageHeaders(requestId, { ...result, model: deps.modelLabel }) },
      });
    } catch (err) {
      deps.log?.({ level: "error", msg: "inference failed", requestId, err: err instanceof Error ? err.message : String(err) });
      return reply(fail("inference_failed", "Processing failed; if it repeats, report the request ID"));
    } finally {
      admitted.ticket.done(serviceMs);
    }
  });
  return app;
}

/**
 * The worker measured its own stages; what the job spent beyond them (waiting for a
 * free worker, plus the hand-over to and from it) is the queue wait.
 */
function observeStages(o: ProductObserver | undefined, totalMs: number, r: { processingMs: number; timings: StageTimings }): void {
  if (!o) return;
  o.stage("queue_wait", Math.max(0, totalMs - r.processingMs));
  o.stage("decode", r.timings.decodeMs);
  o.stage("inference", r.timings.inferenceMs);
  o.stage("compose", r.timings.composeMs);
  o.stage("encode", r.timings.encodeMs);
}
