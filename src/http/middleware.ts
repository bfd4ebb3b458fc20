// Shared middleware: a request ID on every response (errors and 404s included), and
// the one error path that renders the spec's envelope.
import type { Context, Hono, MiddlewareHandler } from "hono";
import { ApiError, fail, type Failure } from "./api-error.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse, failureResponse, requestIdOf } from "./error-response.ts";
import { H } from "./headers.ts";
import { isRequestId, newRequestId } from "./request-id.ts";
import { readUnreadBody } from "./unread-body.ts";

export function requestIdMiddleware(now: () => number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = newRequestId(now());
    c.set("requestId", id);
    await next();
    // An error answer tells its id without its headers being read (a refusal's headers
    // stay a plain record: error-response.ts); the id it was given is this one, or one
    // of our shape that the product passed on.
    const sent = requestIdOf(c.res);
    if (sent === id || isRequestId(sent)) return;
    // Every answer carries an id of our shape: one a handler set is kept only if it is one.
    if (!isRequestId(c.res.headers.get(H.requestId))) {
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

// Text the database will not hold (SQLSTATE 22021: a NUL byte or bytes that are not
// UTF-8; 22P05: a character the encoding lacks) came from the request, so the answer is
// the client's 400, not our 500. Routes refuse such ids and fields before any query
// (path-id.ts, the body schemas); this is the net under every other route.
const REFUSED_TEXT = new Set(["22021", "22P05"]);

function refusedText(err: unknown): Failure | undefined {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && REFUSED_TEXT.has(code) ? fail("invalid_parameter", "The request holds text that cannot be stored (e.g. a NUL character)") : undefined;
}

export function installErrorHandling(
  app: Hono<AppEnv>,
  log: (e: Record<string, unknown>) => void,
  /** Turns known infrastructure errors (a store down) into a failure instead of a 500. */
  classify: (err: unknown) => Failure | undefined = () => undefined,
): void {
  // Answers given before a body was read must reach clients that are still sending it.
  app.use("*", readUnreadBody());
  app.notFound((c) => errorResponse(c.get("requestId") ?? newRequestId(), "not_found", `No route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c: Context<AppEnv>) => {
    const requestId = c.get("requestId") ?? newRequestId();
    if (err instanceof ApiError) return failureResponse(requestId, err.failure());
    const known = classify(err) ?? refusedText(err);
    if (known) {
      log({ level: "warn", msg: known.title ?? known.code, requestId, err: err instanceof Error ? err.message : String(err) });
      return failureResponse(requestId, known);
    }
    log({ level: "error", msg: "unhandled error", requestId, err: err instanceof Error ? err.stack : String(err) });
    return errorResponse(requestId, "internal_error");
  });
}
