// Shared pieces of the gateway's HTTP tests: a harness with a settable clock and its
// own client IP, variant apps over the same stores (other config, a fake product, a
// recording sleep), fake product answers, and queries on holds and captures.
//
// Why variants: a harness costs a database; a variant is only a new Hono app built by
// buildApp over the harness's services, so one harness per file serves every config.
import assert from "node:assert/strict";
import type { Config } from "../../src/config.ts";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { createInlineEngine } from "../../src/engine/pipeline/inline-engine.ts";
import type { ByteBudget } from "../../src/http/byte-budget.ts";
import type { Limiter } from "../../src/limits/index.ts";
import { buildApp, type AppOptions } from "../../src/wiring/app.ts";
import type { Services } from "../../src/wiring/services.ts";
import { fixture, makeHarness, OPERATOR_TOKEN, type Harness, type HarnessOptions } from "../support/harness.ts";

/** 64 × 48 PNG: the cheapest image the stub model can process. */
export const TINY_PNG = fixture("images/orient-upright.png");
export const TINY_W = 64;
export const TINY_H = 48;

export interface TestClock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** 2025-05-14 12:00 KST: a weekday in the middle of a month, far from both resets. */
export const CLOCK_START = Date.UTC(2025, 4, 14, 3, 0, 0);

export function testClock(start = CLOCK_START): TestClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    set(ms) {
      t = ms;
    },
  };
}

/** An address of our own, so the per-IP invalid-key guard (shared in Redis) never mixes runs. */
export function randomIp(): string {
  const b = crypto.getRandomValues(new Uint8Array(3));
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

/** A fresh Idempotency-Key, and the call options that send one. */
export const newIdempotencyKey = () => `order-${crypto.randomUUID()}`;
export const keyed = (key: string) => ({ headers: { "idempotency-key": key } });

export type Fields = Record<string, string | Uint8Array>;
export interface CallInit {
  headers?: Record<string, string>;
  query?: string;
  ip?: string;
}
type Fetcher = { request: (input: string, init?: RequestInit) => Response | Promise<Response> };

export function multipart(fields: Fields): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === "string") form.append(k, v);
    else form.append(k, new Blob([v as Uint8Array<ArrayBuffer>]), `${k}.png`);
  }
  return form;
}

/** POST /v1.0/removebg on any app; the IP travels as X-Forwarded-For (TRUST_PROXY is on). */
export async function postRemovebg(app: Fetcher, ip: string, key: string | undefined, fields: Fields, init: CallInit = {}) {
  const headers: Record<string, string> = { "x-forwarded-for": init.ip ?? ip, ...init.headers };
  if (key !== undefined) headers["x-api-key"] = key;
  return app.request(`/v1.0/removebg${init.query ?? ""}`, { method: "POST", body: multipart(fields), headers });
}

export interface GatewayHarness {
  h: Harness;
  clock: TestClock;
  /** This file's client address. */
  ip: string;
  removebg(key: string | undefined, fields?: Fields, init?: CallInit): Promise<Response> | Response;
  account(key: string | undefined, init?: CallInit): Promise<Response> | Response;
  /** A new app over the same stores with other settings or a fake product. */
  variant(o?: VariantOptions): Variant;
  close(): Promise<void>;
}

/**
 * makeHarness with a test clock, TRUST_PROXY on (so each file's calls come from its
 * own address) and a cheaper stub model.
 */
export async function gatewayHarness(o: HarnessOptions & { clock?: TestClock } = {}): Promise<GatewayHarness> {
  const clock = o.clock ?? testClock();
  const h = await makeHarness({
    ...o,
    engine: o.engine !== undefined ? o.engine : await smallStubEngine(),
    now: o.now ?? clock.now,
    env: { TRUST_PROXY: "true", ...o.env },
  });
  const ip = randomIp();
  return {
    h,
    clock,
    ip,
    removebg: (key, fields = {}, init = {}) => postRemovebg(h.app, ip, key, fields, init),
    account: (key, init = {}) => getAccount(h.app, ip, key, init),
    variant: (v = {}) => variant(h, ip, v),
    close: () => h.close(),
  };
}

/**
 * The stub model (a centred ellipse) at a 64 × 64 model input instead of 1024 × 1024:
 * the same pipeline (decode, mask, resize, compose, encode) at a fraction of the cost,
 * which keeps these HTTP suites fast. Mask quality is not what they test.
 */
async function smallStubEngine() {
  const session = await createMaskSession({
    model: { inputSize: [64, 64] } as never,
    modelPath: "",
    backend: "stub",
    threads: 1,
    wasmDir: "",
    stubDelayMs: 0,
  });
  return createInlineEngine(session);
}

export function getAccount(app: Fetcher, ip: string, key: string | undefined, init: CallInit = {}) {
  const headers: Record<string, string> = { "x-forwarded-for": init.ip ?? ip, ...init.headers };
  if (key !== undefined) headers["x-api-key"] = key;
  return app.request(`/v1.0/account${init.query ?? ""}`, { headers });
}

export interface VariantOptions {
  config?: Partial<Config>;
  /** Replaces some services (e.g. a counting key lookup). */
  services?: Partial<Services>;
  product?: AppOptions["product"];
  sleep?: AppOptions["sleep"];
  limiter?: Limiter;
  gatewayBudget?: ByteBudget;
  /** What the in-process product service sees as "shutting down". */
  isShuttingDown?: () => boolean;
}

export interface Variant {
  app: ReturnType<typeof buildApp>["app"];
  removebg(key: string | undefined, fields?: Fields, init?: CallInit): Promise<Response> | Response;
  account(key: string | undefined, init?: CallInit): Promise<Response> | Response;
}

function variant(h: Harness, ip: string, o: VariantOptions): Variant {
  const s = h.services;
  const { app } = buildApp(
    {
      ...s,
      ...o.services,
      config: { ...s.config, ...o.config },
      limiter: o.limiter ?? s.limiter,
      gatewayBudget: o.gatewayBudget ?? s.gatewayBudget,
    },
    {
      operatorToken: OPERATOR_TOKEN,
      log: (e) => h.logLines.push(JSON.stringify(e)),
      isShuttingDown: o.isShuttingDown ?? (() => false),
      remoteAddress: () => "127.0.0.1",
      sleep: o.sleep,
      product: o.product,
    },
  );
  return {
    app,
    removebg: (key, fields = {}, init = {}) => postRemovebg(app, ip, key, fields, init),
    account: (key, init = {}) => getAccount(app, ip, key, init),
  };
}

// ---- Fake product answers ----------------------------------------------------------

export function productError(status: number, code: string, retryAfter?: number): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  return new Response(JSON.stringify({ errors: [{ title: code, code }] }), { status, headers });
}

/** A well-formed product success carrying a real PNG. */
export function productPng(width = TINY_W, height = TINY_H): Response {
  return new Response(TINY_PNG.slice() as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers: {
      "content-type": "image/png",
      "x-width": String(width),
      "x-height": String(height),
      "x-processing-ms": "7",
      "x-foreground-top": "1",
      "x-foreground-left": "2",
      "x-foreground-width": "3",
      "x-foreground-height": "4",
    },
  });
}

export type ProductStep = (req: Request, signal: AbortSignal) => Response | Promise<Response>;

/** A product that answers with the given steps in turn (the last one repeats) and counts calls. */
export function scriptedProduct(...steps: ProductStep[]) {
  const seen: Request[] = [];
  return {
    seen,
    get calls() {
      return seen.length;
    },
    fn: async (req: Request, signal: AbortSignal): Promise<Response> => {
      const step = steps[Math.min(seen.length, steps.length - 1)]!;
      seen.push(req);
      return step(req, signal);
    },
  };
}

/** A sleep that records each wait and moves the test clock instead of waiting. */
export function recordingSleep(clock: TestClock) {
  const waits: number[] = [];
  return {
    waits,
    fn: async (ms: number) => {
      waits.push(ms);
      clock.advance(ms);
    },
  };
}

/**
 * A product that holds every call open until released, then answers with `answer`
 * (by default a valid PNG). Lets tests keep requests in flight to fill permits.
 */
export function heldProduct(answer: () => Response = () => productPng()) {
  const waiting: (() => void)[] = [];
  let arrivals = 0;
  const arrived: (() => void)[] = [];
  return {
    fn: async (_req: Request, signal: AbortSignal): Promise<Response> => {
      arrivals++;
      arrived.splice(0).forEach((f) => f());
      await new Promise<void>((resolve, reject) => {
        waiting.push(resolve);
        signal.addEventListener("abort", () => reject(new Error("aborted")));
      });
      return answer();
    },
    /** Resolves once `n` calls have reached the product. */
    async untilArrived(n: number): Promise<void> {
      while (arrivals < n) await new Promise<void>((r) => arrived.push(r));
    },
    /** Answers the call that arrived first of those still held. */
    releaseOldest(): void {
      waiting.shift()?.();
    },
    releaseAll(): void {
      waiting.splice(0).forEach((f) => f());
    },
    get arrivals() {
      return arrivals;
    },
  };
}

// ---- Store checks ---------------------------------------------------------------

export interface HoldRow {
  request_id: string;
  amount_krw: number;
  state: "open" | "captured" | "released";
  captured_krw: number | null;
}

export function holdsOf(h: Harness, orgId: string): Promise<HoldRow[]> {
  return h.services.db.query<HoldRow>(
    "SELECT request_id, amount_krw, state, captured_krw FROM holds WHERE org_id = $1 ORDER BY created_at, request_id",
    [orgId],
  );
}

export async function assertNoOpenHold(h: Harness, orgId: string): Promise<void> {
  const open = (await holdsOf(h, orgId)).filter((r) => r.state === "open");
  assert.deepEqual(open, [], "no hold may stay open");
}

export async function capturesOf(h: Harness, requestId: string): Promise<number[]> {
  const rows = await h.services.db.query<{ amount_krw: number }>(
    "SELECT amount_krw FROM ledger_entries WHERE request_id = $1 AND kind = 'capture'",
    [requestId],
  );
  return rows.map((r) => -r.amount_krw);
}

export async function balanceOf(h: Harness, orgId: string): Promise<{ balanceKrw: number; availableKrw: number }> {
  const org = await h.admin("GET", `/orgs/${orgId}`);
  assert.equal(org.status, 200);
  return { balanceKrw: org.json.balanceKrw, availableKrw: org.json.availableKrw };
}

/** The error envelope's one entry, checked for shape; also returns status and request ID. */
export async function errorIn(res: Response): Promise<{ status: number; code: string; title: string; requestId: string | null; retryAfter: string | null }> {
  const body = (await res.json()) as { errors?: { code?: unknown; title?: unknown }[] };
  assert.ok(Array.isArray(body.errors) && body.errors.length === 1, `error envelope expected, got ${JSON.stringify(body)}`);
  const e = body.errors[0]!;
  assert.equal(typeof e.code, "string");
  assert.equal(typeof e.title, "string");
  return {
    status: res.status,
    code: e.code as string,
    title: e.title as string,
    requestId: res.headers.get("x-pd-request-id"),
    retryAfter: res.headers.get("retry-after"),
  };
}

/** Asserts status and code of an error answer; returns the parsed error. */
export async function expectError(res: Response, status: number, code: string) {
  const e = await errorIn(res);
  assert.equal(`${e.status} ${e.code}`, `${status} ${code}`, `title: ${e.title}`);
  assert.match(e.requestId ?? "", /^req_[0-9a-z]{26}$/, "X-PD-Request-Id on every error");
  return e;
}
