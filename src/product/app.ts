// The internal product endpoint of the split deployment (PRODUCT_URL): the same
// multipart request as the public one, already authorised and paid for by the gateway,
// with the job's facts in X-PD-* headers. Reads the form into a job and runs it
// (run-job.ts, the code the in-process gateway calls directly); answers the PNG with
// its facts as headers, or a product error.
import { Hono } from "hono";
import { fail, type Failure } from "../http/api-error.ts";
import { failureResponse } from "../http/error-response.ts";
import { H, imageHeaders } from "../http/headers.ts";
import { PRODUCT_PATH } from "../http/product-path.ts";
import { requestIdFrom } from "../http/request-id.ts";
import { MAX_BODY_BYTES, parseMultipart, readBodyCapped, announcedLength } from "../http/read-body.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import { isCallClass } from "../limits/test-share.ts";
import { isSize } from "../contract/tiers.ts";
import type { JobRunner } from "./job.ts";
import { readRemoveParams } from "./form-params.ts";
import { createJobRunner, type ProductDeps } from "./run-job.ts";

export { PRODUCT_PATH };
export type { ProductDeps, ProductObserver } from "./run-job.ts";

/** `runner` defaults to one of its own; the wiring passes the one it also gives the in-process gateway. */
export function createProductApp(deps: ProductDeps, runner: JobRunner = createJobRunner(deps)): Hono {
  const app = new Hono();
  const maxRetryAfterS = Math.ceil(deps.defaultDeadlineMs / 1000);
  app.post(PRODUCT_PATH, async (c) => {
    const req = c.req.raw;
    // The gateway's id, kept across its resends; anything else sent here is not echoed.
    const requestId = requestIdFrom(req.headers.get(H.requestId), deps.now());
    const reply = (f: Failure) => failureResponse(requestId, f);

    // Before the body: a product that takes no job reads none.
    const unavailable = runner.unavailable();
    if (unavailable) return reply(unavailable);
    if (new URL(req.url).search !== "") return reply(fail("unsupported_parameter", "A query string is not accepted"));

    const expected = Math.min(announcedLength(req) ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
    if (!deps.receiveBudget.tryTake(expected)) {
      return reply(fail("receive_budget_exhausted", undefined, retryAfterSeconds(deps.receiveBudget.untilRoomMs(expected), maxRetryAfterS)));
    }
    let params;
    try {
      const body = await readBodyCapped(req, MAX_BODY_BYTES);
      if (!body.ok) return reply(body);
      const form = parseMultipart(body.bytes, req.headers.get("content-type"));
      if (!form.ok) return reply(form);
      params = readRemoveParams(form.form);
      if (!params.ok) return reply(params);
    } finally {
      deps.receiveBudget.give(expected);
    }

    // The gateway's choice of size for the key (src/gateway/test-key.ts), when it made one.
    const forced = req.headers.get(H.forceSize);
    const deadlineRaw = Number(req.headers.get(H.deadline));
    const callClass = req.headers.get(H.callClass);
    const outcome = await runner.run({
      image: params.image,
      size: forced !== null && isSize(forced) ? forced : params.size,
      semitransparency: params.semitransparency,
      channels: params.channels,
      background: params.background,
      requestId,
      deadline: Number.isFinite(deadlineRaw) && deadlineRaw > 0 ? deadlineRaw : deps.now() + deps.defaultDeadlineMs,
      queueKey: req.headers.get(H.queueKey) ?? "anonymous",
      callClass: isCallClass(callClass) ? callClass : "live",
    });
    if (!outcome.ok) return reply(outcome);
    return new Response(outcome.png, { status: 200, headers: { "content-type": "image/png", ...imageHeaders(requestId, outcome) } });
  });
  return app;
}
