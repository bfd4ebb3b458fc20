// POST /v1.0/removebg: the paid call. handle() below is its order of checks, each step
// in the file that owns it: the key, an invalid one answered by the IP guard (no body
// read for strangers) → query string → product state → body (capped, counted against
// the receive budget) → parameters → Idempotency-Key → limits and permits → a free test
// call or the hold → product (with resends) → the charge → the answer. What a step takes
// goes on the call's Held list (held.ts), given back in one finally whatever the exit;
// then the headers read after that, and the request-log row (none for a refusal no app
// can be named for).
import type { Hono } from "hono";
import { fail, type Failure } from "../http/api-error.ts";
import type { AppEnv } from "../http/app-env.ts";
import { failureResponse } from "../http/error-response.ts";
import { H } from "../http/headers.ts";
import { storeUnavailable } from "../http/store-unavailable.ts";
import { newRequestId } from "../http/request-id.ts";
import type { InvalidKeyGuard } from "../limits/index.ts";
import { createHoldClock, type HoldClock } from "../limits/hold-clock.ts";
import { readRemoveParams } from "../product/form-params.ts";
import { tierOfSize, type Size } from "../contract/tiers.ts";
import { authenticate } from "./authenticate.ts";
import { countTestMinute, forcedSize, TEST_KEY_SIZE, useFreeCall } from "./test-key.ts";
import { clientIp } from "./client-ip.ts";
import type { GatewayDeps, GatewayObserver } from "./deps.ts";
import type { GatewayPorts, KeyContext, KeyOwnerIds, RequestLogRow } from "./ports.ts";
import type { SpendAllowance } from "../billing/spend-allowance.ts";
import type { ProductJob } from "../product/job.ts";
import { SUCCESS_STATUS, successResponse, wantsJson } from "./reply.ts";
import { callProduct, type ProductImage, type UpstreamOutcome } from "./upstream.ts";
import { chargeCall, type Charged } from "./capture.ts";
import { rateLimitHeaders } from "./rate-headers.ts";
import { takePermits, type HeldPermits } from "./capacity.ts";
import { claimIdempotency, REPLAYED_HEADER } from "./idempotency.ts";
import { isUnattributableRefusal, writeLogRow } from "./log-write.ts";
import { createHeld, type Held } from "./held.ts";
import { receiveForm, takeReceiveRoom, type ReceivedForm } from "./receive.ts";

/** An Idempotency-Key stays claimed by its request this long past the request's deadline. */
const IDEMPOTENCY_LEASE_MARGIN_MS = 10_000;

/** What the answer and the request-log row say about one call, filled in as its checks pass. */
interface CallRecord {
  readonly requestId: string;
  readonly receivedAt: number;
  readonly row: RequestLogRow;
  /** Headers every answer to this call carries, errors included. */
  readonly headers: Record<string, string>;
  /** Set once the key is known: every later answer carries X-RateLimit-* (a test key's: its count too). */
  key?: KeyContext;
  /** A live key's spending allowance as its charge left it: X-RateLimit-* without another read. */
  allowance?: SpendAllowance;
  /** False for a refusal no app can be named for: the access log line is its only record. */
  writesRow: boolean;
  /** The row as a success was written by the charge's own statement (src/billing/settle.ts). */
  loggedWithCharge: boolean;
}

/**
 * One call of the route. `lookupKey` answers for the X-Api-Key header; the playground
 * passes one that answers with the app's test key.
 */
export type RemoveBg = (
  req: Request,
  env: unknown,
  o?: { requestId?: string; lookupKey?: GatewayPorts["lookupKey"]; answerHeaders?: Readonly<Record<string, string>> },
) => Promise<Response>;

export function registerRemoveBg(app: Hono<AppEnv>, deps: GatewayDeps, guard: InvalidKeyGuard): void {
  const removeBg = createRemoveBg(deps, guard);
  app.post("/v1.0/removebg", (c) => removeBg(c.req.raw, c.env, { requestId: c.get("requestId"), answerHeaders: c.get("answerHeaders") }));
}

export function createRemoveBg(deps: GatewayDeps, guard: InvalidKeyGuard): RemoveBg {
  // How long this handler's calls hold their permits: the Retry-After of a full cap.
  const holds = createHoldClock(deps.jobEndEveryMs);
  return async (req, env, o = {}) => {
    const receivedAt = deps.now();
    const requestId = o.requestId ?? newRequestId(receivedAt);
    const call: CallRecord = {
      requestId,
      receivedAt,
      row: { requestId, receivedAt, status: 0, chargedKrw: 0, attempts: 0 },
      // The security headers, when the app gave them: made into each answer, not stamped after.
      headers: { ...o.answerHeaders },
      writesRow: true,
      loggedWithCharge: false,
    };
    const held = createHeld();
    let res: Response;
    try {
      res = await handle(req, env, call, held, { deps, guard, holds, lookupKey: o.lookupKey ?? deps.ports.lookupKey });
    } catch (err) {
      const storeDown = storeUnavailable(err);
      deps.log({ level: "error", msg: storeDown ? "store unavailable" : "removebg failed", requestId, err: err instanceof Error ? err.stack : String(err) });
      const f = storeDown ?? fail("internal_error");
      call.row.errorCode = f.code;
      res = failureResponse(requestId, f, call.headers);
    } finally {
      await held.giveBackAll((err) =>
        deps.log({ level: "error", msg: "cleanup step failed", requestId, err: err instanceof Error ? err.message : String(err) }),
      );
    }
    return finish(res, call, held.succeeded, deps);
  };
}

interface Steps {
  deps: GatewayDeps;
  guard: InvalidKeyGuard;
  holds: HoldClock;
  lookupKey: GatewayPorts["lookupKey"];
}

async function handle(req: Request, env: unknown, call: CallRecord, held: Held, s: Steps): Promise<Response> {
  const { deps } = s;
  const reject = (f: Failure) => {
    call.row.errorCode = f.code;
    return failureResponse(call.requestId, f, call.headers);
  };

  // Who is calling: the key (an invalid one answered by the IP guard).
  const ip = clientIp(req, env, deps);
  call.row.ip = ip;
  const auth = await timed(deps, "authenticate", () => authenticate(req.headers.get("x-api-key"), ip, s.lookupKey, s.guard));
  if (!auth.ok) {
    call.writesRow = !isUnattributableRefusal(auth);
    // A suspended key's refusal is its app's: the row names the key, so its usage page lists it.
    if (auth.owner) nameKey(call.row, auth.owner);
    return reject(auth);
  }
  const key = auth.key;
  call.key = key;
  nameKey(call.row, key);
  if (key.kind === "test") call.headers[H.testSize] = TEST_KEY_SIZE;
  void deps.ports.touchKey(key.keyId).catch(() => {});

  // What the key's app may do now.
  if (new URL(req.url).search !== "") return reject(fail("unsupported_parameter", "A query string is not accepted"));
  if (key.productStatus === "discontinued") return reject(fail("product_discontinued"));
  if (key.productStatus === "maintenance") return reject(fail("service_unavailable", "The service is under maintenance", 300));
  if (!key.productEnabled) return reject(fail("product_not_enabled", "The product is not enabled for this app; apply for use in the console"));
  if (key.kind === "live" && key.refundPending) return reject(fail("refund_pending"));

  // The body and its parameters.
  const room = takeReceiveRoom(req, deps.receiveBudget, deps.settings.deadlineMs);
  if (!room.ok) return reject(room);
  held.always(room.giveBack);
  const body = await receiveForm(req);
  if (!body.ok) return reject(body);
  const params = readRemoveParams(body.form);
  if (!params.ok) return reject(params);
  const forced = forcedSize(key.kind);
  const size = forced ?? params.size;
  call.row.tier = tierOfSize(size);

  // Idempotency-Key: a replay of a request that succeeded runs the model again and charges
  // nothing, but only where a first call would run: it takes the same limits, free call or
  // hold below, and gives the free call or hold back whatever its outcome.
  const leaseMs = deps.settings.deadlineMs + IDEMPOTENCY_LEASE_MARGIN_MS;
  const claim = await claimIdempotency(req, { appId: key.appId, kind: key.kind, form: body.form, leaseMs }, call, deps.ports.idempotency, deps.log);
  if (!claim.ok) return reject(claim);
  held.unlessSucceeded(claim.giveBack);
  const replay = claim.replay;
  if (replay) call.headers[REPLAYED_HEADER] = "true";

  // Limits and permits, then what the call spends: a free test call, or a live hold.
  const permits = await timed(deps, "limits", () => takeLimits(key, call.requestId, s));
  if (!permits.ok) return reject(permits);
  held.always(permits.release);
  if (key.kind === "test") {
    // Errors are free: a failed test call gives its free call back.
    const free = await useFreeCall(deps.ports, key, call.requestId);
    if (!free.ok) return reject(free);
    call.headers[H.testRemaining] = String(replay ? free.remaining + 1 : free.remaining);
    if (replay) held.always(free.giveBack);
    else held.unlessSucceeded(free.giveBack);
  } else {
    // The hold for the tier's price within balance and spending limits (402, 429).
    const hold = await timed(deps, "reserve", () => deps.money.reserve({ requestId: call.requestId, orgId: key.orgId, appId: key.appId, size }));
    if (!hold.ok) return reject(hold);
    const release = async () => {
      await deps.money.release(call.requestId);
      deps.observe?.released();
    };
    if (replay) held.always(release);
    else held.unlessSucceeded(release);
  }
  permits.goesToProduct();

  // The product, with the resends the spec allows.
  const outcome = await timed(deps, "product", () => runProduct(call, key, { ...params, size }, forced !== undefined, body, deps));
  call.row.attempts = outcome.attempts;
  if (!outcome.ok) return reject(outcome);
  const image = outcome.image;
  Object.assign(call.row, { processingMs: image.processingMs, width: image.width, height: image.height });

  // The charge (live keys; a replay shows the balance and charges nothing).
  if (key.kind === "live" && replay) {
    await stampReplayBalance(key.orgId, call, deps);
  } else if (key.kind === "live") {
    const charge = await timed(deps, "capture", () => chargeFor(call, key, size, image, deps));
    if (!charge.ok) return reject(charge);
    call.row.chargedKrw = charge.chargedKrw;
    Object.assign(call.headers, charge.headers);
    call.allowance = charge.allowance;
    call.loggedWithCharge = charge.logged;
  }
  held.succeed();
  await claim.complete();
  deps.observe?.charged(key.kind, key.kind === "live" ? call.row.chargedKrw : 0);
  return successResponse(call.requestId, image, call.headers, wantsJson(req.headers.get("accept")));
}

/**
 * After what the call took is given back: the headers whose numbers that changes, and
 * the request-log row.
 */
async function finish(res: Response, call: CallRecord, succeeded: boolean, deps: GatewayDeps): Promise<Response> {
  const key = call.key;
  if (key?.kind === "test" && !succeeded) await stampTestRemaining(res, key, deps);
  if (key) await stampRateLimit(res, key, call.allowance, deps);
  call.row.status = res.status;
  if (!call.writesRow) return res;
  // Written again only if the answer changed after the charge (an error on the way out).
  if (call.loggedWithCharge && res.status === SUCCESS_STATUS && call.row.errorCode === undefined) return res;
  await writeLogRow(deps.ports.logRequest, call.row, deps.sleep).catch((err: unknown) => {
    deps.log({ level: "error", msg: "request log write failed", requestId: call.requestId, err: err instanceof Error ? err.message : String(err) });
    // A charged call's row is the customer's record of the charge: the reconciler writes
    // it once the store is back (after asking for the capture again, which changes nothing).
    if (succeeded && call.row.keyKind === "live" && call.row.chargedKrw > 0) {
      deps.money.reconcile(call.requestId, call.row.chargedKrw, () => deps.ports.logRequest(call.row));
    }
  });
  return res;
}

/** Whose call this is, on its request-log row. */
function nameKey(row: RequestLogRow, k: KeyOwnerIds): void {
  Object.assign(row, { orgId: k.orgId, appId: k.appId, keyId: k.keyId, keyKind: k.kind });
}

/** A test key's minute window first, then the permits of either kind (capacity.ts). */
async function takeLimits(key: KeyContext, requestId: string, s: Steps): Promise<HeldPermits | Failure> {
  const { deps } = s;
  if (key.kind === "test") {
    const minute = await countTestMinute(deps.limiter, key.keyId);
    if (!minute.ok) return minute;
  }
  return takePermits(deps.limiter, key, deps.settings, s.holds, deps.now, (err) =>
    deps.log({ level: "warn", msg: "permit renew failed", requestId, err: err instanceof Error ? err.message : String(err) }),
  );
}

/**
 * The product within the deadline, with the resends upstream.ts allows. The form is
 * parsed once, here: the in-process product takes this job as it is; a product behind
 * HTTP gets the client's form as it came (product-http.ts).
 */
function runProduct(
  call: CallRecord,
  key: KeyContext,
  params: Pick<ProductJob, "image" | "size" | "semitransparency" | "channels" | "background">,
  forcedSize: boolean,
  body: ReceivedForm,
  deps: GatewayDeps,
): Promise<UpstreamOutcome> {
  const job: ProductJob = {
    image: params.image,
    size: params.size,
    semitransparency: params.semitransparency,
    channels: params.channels,
    background: params.background,
    requestId: call.requestId,
    deadline: call.receivedAt + deps.settings.deadlineMs,
    queueKey: key.keyId,
    callClass: key.kind,
  };
  const wire = { body: body.bytes, contentType: body.contentType ?? "" };
  return callProduct((signal) => deps.product({ job, wire, forcedSize }, signal), {
    deadlineAt: job.deadline,
    now: deps.now,
    sleep: deps.sleep,
    maxResends: deps.settings.maxResends,
    minRemainingMs: deps.settings.resendMinRemainingMs,
    defaultWaitS: deps.settings.resendDefaultWaitS,
    onResend: (code) => deps.observe?.resent(code),
  });
}

/** The live call's charge for the image in hand (capture.ts says what its outcome means). */
function chargeFor(call: CallRecord, key: KeyContext, size: Size | undefined, image: ProductImage, deps: GatewayDeps): Promise<Charged | Failure> {
  const charge = {
    requestId: call.requestId,
    key,
    size,
    pixels: image.width * image.height,
    // Asked again while the store is away, up to the deadline: a lost reply may hide a charge that stands.
    deadlineAt: call.receivedAt + deps.settings.deadlineMs,
    // The row rides in the charge's statement as the success it is about to be.
    logRow: { ...call.row, status: SUCCESS_STATUS },
  };
  // Its row is written again after a capture the reconciler makes: the one written now may be lost too.
  return chargeCall(deps.money, charge, { log: deps.log, writeRowAgain: () => deps.ports.logRequest(call.row) });
}

/**
 * Test-key headers go on every answer to a test key, errors included (DECISIONS.md).
 * An error gives its call back, so the count is read after the give-backs ran.
 */
async function stampTestRemaining(res: Response, key: KeyContext, deps: GatewayDeps): Promise<void> {
  try {
    res.headers.set(H.testRemaining, String(await deps.ports.testCallsRemaining({ orgId: key.orgId, lifetime: key.testQuota === "lifetime" })));
  } catch {
    // A store that is down already made this answer a 503; the header is left out.
  }
}

/**
 * X-RateLimit-* (rate-headers.ts), read once the give-backs ran so the numbers are final.
 * A charged call's numbers came with its charge (no give-back changes them after it).
 */
async function stampRateLimit(res: Response, key: KeyContext, charged: SpendAllowance | undefined, deps: GatewayDeps): Promise<void> {
  try {
    const headers = await rateLimitHeaders(key, { limiter: deps.limiter, now: deps.now, allowance: deps.money.allowance }, charged);
    for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
  } catch {
    // A store that is down already made this answer a 503; the headers are left out.
  }
}

/** A replay charges nothing; the balance is shown when the store answers. */
async function stampReplayBalance(orgId: string, call: CallRecord, deps: GatewayDeps): Promise<void> {
  call.headers[H.chargedKrw] = "0";
  try {
    call.headers[H.balanceKrw] = String((await deps.money.balances(orgId)).balanceKrw);
  } catch {
    // The image is in hand; a missing balance header is better than an error.
  }
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
