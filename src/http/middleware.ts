// Shared middleware: a request ID on every response (errors and 404s included), and
// the one error path that renders the spec's envelope.
import type { Context, Hono, MiddlewareHandler } from "hono";
import { ApiError, type Failure } from "./api-error.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse, failureResponse } from "./error-response.ts";
import { H } from "./headers.ts";
import { newRequestId } from "./request-id.ts";

export function requestIdMiddleware(now: () => number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = newRequestId(now());
    c.set("requestId", id);
    await next();
    if (!c.res.headers.has(H.requestId)) {
      // Responses from elsewhere can have immutable headers; copy before stamping.
      try {
        c.res.headers.set(H.requestId, id);
      } catch {
        c.res = new Response(c.res.body, c.res);
        c.res.headers.set(H.requestId, id);
      }
    }
  };
}

export function installErrorHandling(
  app: Hono<AppEnv>,
  log: (e: Record<string, unknown>) => void,
  /** Turns known infrastructure errors (a store down) into a failure instead of a 500. */
  classify: (err: unknown) => Failure | undefined = () => undefined,
): void {
  app.notFound((c) => errorResponse(c.get("requestId") ?? newRequestId(), "not_found", `No route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c: Context<AppEnv>) => {
    const requestId = c.get("requestId") ?? newRequestId();
    if (err instanceof ApiError) return failureResponse(requestId, err.failure());
    const known = classify(err);
    if (known) {
      log({ level: "warn", msg: known.title ?? known.code, requestId, err: err instanceof Error ? err.message : String(err) });
      return failureResponse(requestId, known);
    }
    log({ level: "error", msg: "unhandled error", requestId, err: err instanceof Error ? err.stack : String(err) });
    return errorResponse(requestId, "internal_error");
  });
}
