// POST /v1.0/removebg: the paid call. Order of checks: IP guard and key (no body read
// for strangers) → query string → product state → body (streamed, capped, byte
// budget) → parameters → limits and permits → hold → product (with resends) →
// capture or release → request-log row (none for a refusal no app can be named for).
// Every exit path releases what it took.
import type { Hono } from "hono";
import { fail, type Failure } from "../http/api-error.ts";
import type { AppEnv } from "../http/app-env.ts";
import { failureResponse } from "../http/error-response.ts";
import { H } from "../http/headers.ts";
import { STORE_RETRY_AFTER_S, storeUnavailable } from "../http/store-unavailable.ts";
import { newRequestId } from "../http/request-id.ts";
import { MAX_BODY_BYTES, announcedLength, parseMultipart, readBodyCapped } from "../http/read-body.ts";
import type { InvalidKeyGuard, PermitSet } from "../limits/index.ts";
import { createHoldClock, type HoldClock } from "../limits/hold-clock.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import { readRemoveParams } from "../product/params.ts";
import { tierOfSize, type Size } from "../imaging/tiers.ts";
import { reserveAmountForSize, priceForPixels } from "../billing/prices.ts";
import { authenticate } from "./authenticate.ts";
import { forcedSize, TEST_KEY_SIZE } from "./test-key.ts";
import { clientIp } from "./client-ip.ts";
import type { GatewayDeps, GatewayObserver } from "./deps.ts";
import type { KeyContext, RequestLogRow } from "./ports.ts";
import type { SpendAllowance } from "../billing/spend-allowance.ts";
import type { ProductJob } from "../product/job.ts";
import { SUCCESS_STATUS, successResponse, wantsJson } from "./reply.ts";
import { callProduct } from "./upstream.ts";
import { captureSettled } from "./capture.ts";
import { rateLimitHeaders, TEST_PER_MINUTE, TEST_WINDOW_MS, testMinuteKey } from "./rate-headers.ts";
import { takePermits } from "./capacity.ts";
import { claimIdempotency, REPLAYED_HEADER } from "./idempotency.ts";
import { isUnattributableRefusal, writeLogRow } from "./log-write.ts";

/** An Idempotency-Key stays claimed by its request this long past the request's deadline. */
const IDEMPOTENCY_LEASE_MARGIN_MS = 10_000;

/** What one paid call has taken and learnt so far (not the console's Hono context `Ctx`). */
interface CallState {
  requestId: string;
  receivedAt: number;
  row: RequestLogRow;
  headers: Record<string, string>;
  /** Undo steps, run in reverse order whatever happens. */
  undo: (() => Promise<unknown>)[];
  succeeded: boolean;
  /** Set once a test key is recognised: whose free calls the answer reports. */
  testQuota?: { orgId: string; lifetime: boolean };
  /** Set once the key is known: every later answer carries X-RateLimit-*. */
  key?: KeyContext;
  /** A live key's spending allowance as its charge left it: X-RateLimit-* without another read. */
  allowance?: SpendAllowance;
  /** False for a refusal no app can be named for: the access log line is its only record. */
  logRow: boolean;
  /** The row as a success was written by the charge's own statement (settle.ts). */
  loggedWithCharge?: boolean;
}

export function registerRemoveBg(app: Hono<AppEnv>, deps: GatewayDeps, guard: InvalidKeyGuard): void {
  // How long this process's calls hold their permits: the Retry-After of a full cap.
  const holds = createHoldClock(deps.jobEndEveryMs);
  app.post("/v1.0/removebg", async (c) => {
    const receivedAt = deps.now();
    const requestId = c.get("requestId") ?? newRequestId(receivedAt);
    const ctx: CallState = {
      requestId,
      receivedAt,
      row: { requestId, receivedAt, status: 0, chargedKrw: 0, attempts: 0 },
      headers: {},
      undo: [],
      succeeded: false,
      logRow: true,
    };
    let res: Response;
    try {
      res = await handle(c.req.raw, c.env, ctx, deps, guard, holds);
    } catch (err) {
      const storeDown = storeUnavailable(err);
      deps.log({ level: "error", msg: storeDown ? "store unavailable" : "removebg failed", requestId, err: err instanceof Error ? err.stack : String(err) });
      const f = storeDown ?? fail("internal_error");
      ctx.row.errorCode = f.code;
      res = failureResponse(requestId, f, ctx.headers);
    } finally {
      for (const step of ctx.undo.reverse()) {
        await step().catch((err: unknown) =>
          deps.log({ level: "error", msg: "cleanup step failed", requestId, err: err instanceof Error ? err.message : String(err) }),
        );
      }
    }
    if (ctx.testQuota && !ctx.succeeded) await stampTestRemaining(res, ctx.testQuota, deps);
    if (ctx.key) await stampRateLimit(res, ctx.key, ctx.allowance, deps);
    ctx.row.status = res.status;
    if (!ctx.logRow) return res;
    // Written again only if the answer changed after the charge (an error on the way out).
    if (ctx.loggedWithCharge && res.status === SUCCESS_STATUS && ctx.row.errorCode === undefined) return res;
    await writeLogRow(deps.ports.logRequest, ctx.row, deps.sleep).catch((err: unknown) => {
      deps.log({ level: "error", msg: "request log write failed", requestId, err: err instanceof Error ? err.message : String(err) });
      // A charged call's row is the customer's record of the charge: the reconciler writes
      // it once the store is back (after asking for the capture again, which changes nothing).
      if (ctx.succeeded && ctx.row.keyKind === "live" && ctx.row.chargedKrw > 0) {
        deps.reconcile(requestId, ctx.row.chargedKrw, () => deps.ports.logRequest(ctx.row));
      }
    });
    return res;
  });
}

/**
 * Test-key headers go on every answer to a test key, errors included (DECISIONS.md).
 * An error gives its call back, so the count is read after the undo steps ran.
 */
async function stampTestRemaining(res: Response, q: { orgId: string; lifetime: boolean }, deps: GatewayDeps): Promise<void> {
  try {
    res.headers.set(H.testRemaining, String(await deps.ports.testCallsRemaining(q)));
  } catch {
    // A store that is down already made this answer a 503; the header is left out.
  }
}

/**
 * X-RateLimit-* (rate-headers.ts), read once the undo steps ran so the numbers are final.
 * A charged call's numbers came with its capture (no undo step changes them after it).
 */
async function stampRateLimit(res: Response, key: KeyContext, charged: SpendAllowance | undefined, deps: GatewayDeps): Promise<void> {
  try {
    const headers = await rateLimitHeaders(key, { limiter: deps.limiter, now: deps.now, spendAllowance: deps.ports.spendAllowance }, charged);
    for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
  } catch {
    // A store that is down already made this answer a 503; the headers are left out.
  }
}

async function handle(req: Request, env: unknown, ctx: CallState, deps: GatewayDeps, guard: InvalidKeyGuard, holds: HoldClock): Promise<Response> {
  const reject = (f: Failure) => {
    ctx.row.errorCode = f.code;
    return failureResponse(ctx.requestId, f, ctx.headers);
  };
  const ip = clientIp(req, env, deps);
  ctx.row.ip = ip;
  const auth = await timed(deps, "authenticate", () => authenticate(req.headers.get("x-api-key"), ip, deps.ports, guard));
  if (!auth.ok) {
    ctx.logRow = !isUnattributableRefusal(auth);
    // A suspended key's refusal is its app's: the row names the key, so its usage page lists it.
    if (auth.owner) Object.assign(ctx.row, { orgId: auth.owner.orgId, appId: auth.owner.appId, keyId: auth.owner.keyId, keyKind: auth.owner.kind });
    return reject(auth);
  }
  const key = auth.key;
  ctx.key = key;
  Object.assign(ctx.row, { orgId: key.orgId, appId: key.appId, keyId: key.keyId, keyKind: key.kind });
  if (key.kind === "test") {
    ctx.headers[H.testSize] = TEST_KEY_SIZE;
    ctx.testQuota = { orgId: key.orgId, lifetime: key.testQuota === "lifetime" };
  }
  void deps.ports.touchKey(key.keyId).catch(() => {});

  if (new URL(req.url).search !== "") return reject(fail("unsupported_parameter", "A query string is not accepted"));
  const status = key.productStatus;
  if (status === "discontinued") return reject(fail("product_discontinued"));
  if (status === "maintenance") return reject(fail("service_unavailable", "The service is under maintenance", 300));
  if (!key.productEnabled) return reject(fail("product_not_enabled", "The product is not enabled for this app; apply for use in the console"));
  if (key.kind === "live" && key.refundPending) return reject(fail("refund_pending"));

  // Body: refused early by Content-Length, else while streaming; counted against the byte budget.
  const announced = announcedLength(req);
  if (announced !== undefined && announced > MAX_BODY_BYTES) return reject(fail("file_too_large"));
  const expected = Math.min(announced ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
  if (!deps.receiveBudget.tryTake(expected)) return reject(fail("gateway_busy", undefined, retryAfterSeconds(deps.receiveBudget.untilRoomMs(expected), deps.settings.deadlineMs / 1000)));
  ctx.undo.push(async () => deps.receiveBudget.give(expected));
  const body = await readBodyCapped(req, MAX_BODY_BYTES);
  if (!body.ok) return reject(body);
  const contentType = req.headers.get("content-type");
  const form = parseMultipart(body.bytes, contentType);
  if (!form.ok) return reject(form);
  const params = readRemoveParams(form.form);
  if (!params.ok) return reject(params);

  const forced = forcedSize(key.kind);
  const size = forced ?? params.size;
  ctx.row.tier = tierOfSize(size);

  // Idempotency-Key: a replay of a request that succeeded runs the model again and charges nothing.
  const leaseMs = deps.settings.deadlineMs + IDEMPOTENCY_LEASE_MARGIN_MS;
  const claim = await claimIdempotency(req, { appId: key.appId, kind: key.kind, form: form.form, leaseMs }, ctx, deps.ports.idempotency, deps.log);
  if (!claim.ok) return reject(claim);
  const replay = claim.replay;
  if (replay) ctx.headers[REPLAYED_HEADER] = "true";

  const taken =
    key.kind === "test"
      ? await timed(deps, "limits", () => takeTestAllowance(key, ctx, deps, holds, replay))
      : await takeLiveAllowance(key, size, ctx, deps, holds, replay);
  if (!taken.ok) return reject(taken);

  // Parsed once, here: the in-process product takes this job as it is; a product behind
  // HTTP gets the client's form as it came (product-http.ts).
  const job: ProductJob = {
    image: params.image,
    size,
    semitransparency: params.semitransparency,
    channels: params.channels,
    background: params.background,
    requestId: ctx.requestId,
    deadline: ctx.receivedAt + deps.settings.deadlineMs,
    queueKey: key.keyId,
    callClass: key.kind,
  };
  const wire = { body: body.bytes, contentType: contentType ?? "" };
  const outcome = await timed(deps, "product", () =>
    callProduct((signal) => deps.product({ job, wire, forcedSize: forced !== undefined }, signal), {
      deadlineAt: job.deadline,
      now: deps.now,
      sleep: deps.sleep,
      maxResends: deps.settings.maxResends,
      minRemainingMs: deps.settings.resendMinRemainingMs,
      defaultWaitS: deps.settings.resendDefaultWaitS,
      onResend: (code) => deps.observe?.resent(code),
    }),
  );
  ctx.row.attempts = outcome.attempts;
  if (!outcome.ok) return reject(outcome);
  ctx.row.processingMs = outcome.image.processingMs;
  ctx.row.width = outcome.image.width;
  ctx.row.height = outcome.image.height;

  if (key.kind === "live" && replay) {
    await stampReplayBalance(key.orgId, ctx, deps);
  } else if (key.kind === "live") {
    const reserved = reserveAmountForSize(size);
    const price = Math.min(reserved, priceForPixels(outcome.image.width * outcome.image.height));
    // Asked again while the store is away, up to the deadline: a lost reply may hide a charge that stands.
    const retry = { deadlineAt: ctx.receivedAt + deps.settings.deadlineMs, now: deps.now, sleep: deps.sleep };
    // The row rides in the capture's statement as the success it is about to be.
    const asSuccess = { ...ctx.row, status: SUCCESS_STATUS };
    const charge = await timed(deps, "capture", () =>
      captureSettled((id, krw) => deps.ports.capture(id, krw, key, asSuccess), ctx.requestId, price, retry),
    );
    if (charge.kind === "refused") {
      // The ledger says why (the hold had already been released or is gone): certainly not charged.
      deps.log({ level: "error", msg: "capture refused", requestId: ctx.requestId, code: charge.refusal.code, err: charge.refusal.title });
      return reject(fail("service_unavailable", `${charge.refusal.title ?? "The charge was refused"}; nothing was charged`, STORE_RETRY_AFTER_S));
    }
    if (charge.kind === "failed") {
      // The capture did not run: not charged, and the undo step releases the hold.
      deps.log({ level: "error", msg: "capture failed", requestId: ctx.requestId, err: charge.error instanceof Error ? charge.error.message : String(charge.error) });
      return reject(fail("service_unavailable", "Billing is temporarily unavailable; nothing was charged", STORE_RETRY_AFTER_S));
    }
    if (charge.kind === "charged") {
      ctx.row.chargedKrw = charge.charge.chargedKrw;
      ctx.headers[H.chargedKrw] = String(charge.charge.chargedKrw);
      ctx.headers[H.balanceKrw] = String(charge.charge.balanceKrw);
      ctx.allowance = charge.charge.allowance;
      ctx.loggedWithCharge = charge.charge.logged === true;
    } else {
      // The work is done and may be charged: delivered with the price the reconciler
      // will capture (the balance after it is unknown, so that header is left out).
      ctx.row.chargedKrw = price;
      ctx.headers[H.chargedKrw] = String(price);
      deps.log({ level: "error", msg: "capture outcome unknown at the deadline; reconciler takes the hold", requestId: ctx.requestId, amountKrw: price, err: String(charge.lastError) });
      // Its log row is written again after that capture: the one written now may be lost too.
      deps.reconcile(ctx.requestId, price, () => deps.ports.logRequest(ctx.row));
    }
  }
  ctx.succeeded = true;
  await claim.complete();
  deps.observe?.charged(key.kind, key.kind === "live" ? ctx.row.chargedKrw : 0);
  return successResponse(ctx.requestId, outcome.image, ctx.headers, wantsJson(req.headers.get("accept")));
}

/** Runs one stage and reports its time, whether it succeeded or threw. */
async function timed<T>(deps: GatewayDeps, stage: Parameters<GatewayObserver["stage"]>[0], run: () => Promise<T>): Promise<T> {
  if (!deps.observe) return run();
  const t0 = performance.now();
  try {
    return await run();
  } finally {
    deps.observe.stage(stage, performance.now() - t0);
  }
}

// Permits are short leases (settings.permitLeaseMs) renewed every third of the lease
// while the request runs: a gateway that dies frees its slots within one lease instead
// of holding them for a whole deadline.

/** Keeps the permits alive until the request's undo steps give them back. */
function keepPermits(permits: PermitSet, ctx: CallState, deps: GatewayDeps): void {
  const lease = deps.settings.permitLeaseMs;
  const timer = setInterval(() => {
    for (const p of permits.permits) {
      p.renew(lease).catch((err: unknown) =>
        deps.log({ level: "warn", msg: "permit renew failed", requestId: ctx.requestId, err: err instanceof Error ? err.message : String(err) }),
      );
    }
  }, Math.max(100, Math.floor(lease / 3)));
  ctx.undo.push(async () => {
    clearInterval(timer);
    await permits.release();
  });
}

/** A replay charges nothing; the balance is shown when the store answers. */
async function stampReplayBalance(orgId: string, ctx: CallState, deps: GatewayDeps): Promise<void> {
  ctx.headers[H.chargedKrw] = "0";
  try {
    ctx.headers[H.balanceKrw] = String((await deps.ports.balances(orgId)).balanceKrw);
  } catch {
    // The image is in hand; a missing balance header is better than an error.
  }
}

async function takeTestAllowance(key: KeyContext, ctx: CallState, deps: GatewayDeps, holds: HoldClock, replay: boolean): Promise<{ ok: true } | Failure> {
  const lifetime = key.testQuota === "lifetime";
  const perMinute = await deps.limiter.hit(testMinuteKey(key.keyId), TEST_PER_MINUTE, TEST_WINDOW_MS);
  if (!perMinute.allowed) {
    return fail("test_quota_exceeded", "Test keys allow 10 calls per minute", retryAfterSeconds(perMinute.retryAfterMs));
  }
  const permits = await takePermits(deps.limiter, key, deps.settings, holds, deps.now);
  if (!permits.ok) return permits;
  keepPermits(permits, ctx, deps);
  if (replay) {
    // A replay does not use another free call.
    ctx.headers[H.testRemaining] = String(await deps.ports.testCallsRemaining({ orgId: key.orgId, lifetime }));
    permits.goesToProduct();
    return { ok: true };
  }
  const quota = await deps.ports.consumeTestCall({ orgId: key.orgId, lifetime });
  if (!quota.ok) return quota;
  ctx.headers[H.testRemaining] = String(quota.remaining);
  // Errors are free: a failed test call gives its allowance back.
  ctx.undo.push(async () => {
    if (!ctx.succeeded) await deps.ports.refundTestCall({ orgId: key.orgId, period: quota.period });
  });
  permits.goesToProduct();
  return { ok: true };
}

async function takeLiveAllowance(
  key: KeyContext,
  size: Size | undefined,
  ctx: CallState,
  deps: GatewayDeps,
  holds: HoldClock,
  replay: boolean,
): Promise<{ ok: true } | Failure> {
  const permits = await timed(deps, "limits", () => takePermits(deps.limiter, key, deps.settings, holds, deps.now));
  if (!permits.ok) return permits;
  keepPermits(permits, ctx, deps);
  if (replay) {
    permits.goesToProduct();
    return { ok: true }; // nothing is reserved for a call that charges nothing
  }
  const hold = await timed(deps, "reserve", () =>
    deps.ports.reserve({ requestId: ctx.requestId, orgId: key.orgId, appId: key.appId, amountKrw: reserveAmountForSize(size) }),
  );
  if (!hold.ok) return hold;
  ctx.undo.push(async () => {
    if (ctx.succeeded) return;
    await deps.ports.release(ctx.requestId);
    deps.observe?.released();
  });
  permits.goesToProduct();
  return { ok: true };
}
