// Builds every long-lived dependency from the config: stores, limiter, money, keys,
// the removal engine. main.ts and the tests build the service the same way.
import { join } from "node:path";
import { createAccounts, type Accounts } from "../accounts/index.ts";
import { createBilling, createRequestLog, createTestQuota, type Billing, type RequestLog, type TestQuota } from "../billing/index.ts";
import { ConfigError, type Config } from "../config.ts";
import { migrate, openDb, type Db } from "../db/index.ts";
import { watchWrites } from "../db/write-watch.ts";
import { createByteBudget, type ByteBudget } from "../http/byte-budget.ts";
import { createIdempotencyStore, type IdempotencyStore } from "../billing/idempotency.ts";
import { createReconciler, type Reconciler } from "../billing/reconciler.ts";
import { createKeyService, loadOrCreatePepper, type KeyService } from "../keys/index.ts";
import { createKnownKeys, KNOWN_KEY_TABLES } from "../keys/known-keys.ts";
import { createLimiter, type Limiter } from "../limits/index.ts";
import { createMailer, type Mailer } from "../mail/index.ts";
import { createMetrics, type Metrics } from "../metrics/index.ts";
import { createReconciliation, createRefunds, createSandboxProvider, createStripeProvider, createTopups, type PaymentProvider, type ReconciliationService, type Refunds, type Topups } from "../payments/index.ts";
import { createAdmission, type Admission } from "../product/admission.ts";
import type { Engine } from "../engine/pipeline/engine.ts";
import { InferenceError } from "../engine/library/errors.ts";
import { DEFAULT_MODEL, openEngine } from "../engine/library/open-engine.ts";
import { gpuFormLabels, modelLabelFor } from "../product/model-label.ts";
import { PACKAGE_MODELS_DIR } from "../engine/assets/paths.ts";

export interface Services {
  config: Config;
  now: () => number;
  db: Db;
  limiter: Limiter;
  accounts: Accounts;
  billing: Billing;
  testQuota: TestQuota;
  requestLog: RequestLog;
  keys: KeyService;
  /** Idempotency-Keys of POST /v1.0/removebg (24 h per app). */
  idempotency: IdempotencyStore;
  /** Captures holds whose outcome was unknown when their request's deadline came. */
  reconciler: Reconciler;
  /** Absent when this process is a gateway only (PRODUCT_URL set). */
  engine?: Engine;
  admission?: Admission;
  /** X-PD-Model: what the engine runs, "name/version" (absent without an engine). */
  modelLabel?: () => string | undefined;
  productBudget: ByteBudget;
  gatewayBudget: ByteBudget;
  /** Console mail: SMTP when SMTP_URL is set, else the outbox table. */
  mailer: Mailer;
  /** Top-ups through the configured provider (PAYMENT_PROVIDER; none: not offered) and refunds of the money they took. */
  payments: { provider?: PaymentProvider; topups: Topups; refunds: Refunds; reconciliation: ReconciliationService };
  /** This instance's Prometheus registry and metrics (GET /metrics). */
  metrics: Metrics;
  close(): Promise<void>;
}

export interface ServiceOptions {
  now?: () => number;
  log: (e: Record<string, unknown>) => void;
  /** Tests may bring their own engine (or none, with PRODUCT_URL or a fake product). */
  engine?: Engine | null;
  /** An already open, migrated database (tests start from a migrated template). */
  db?: Db;
}

export async function createServices(config: Config, opts: ServiceOptions): Promise<Services> {
  const now = opts.now ?? Date.now;
  // PGlite gets its own folder inside DATA_DIR so other state can live beside it.
  const pgliteDir = config.DATA_DIR === "memory://" ? "memory://" : join(config.DATA_DIR, "pglite");
  // Every service writes through a handle that tells the gateway's remembered key rows
  // of changes to their tables, so a suspension or a sale switch made here applies at once.
  const known = createKnownKeys(now);
  const db = watchWrites(opts.db ?? (await openDb({ databaseUrl: config.DATABASE_URL, dataDir: pgliteDir })), KNOWN_KEY_TABLES, known.forget);
  await migrate(db);
  const pepper = await loadOrCreatePepper(db, config.KEY_PEPPER);
  const limiter = createLimiter({
    redisUrl: config.REDIS_URL,
    now,
    // A clock a test gave the services is the Redis scripts' too; the service never sets one.
    redisClock: opts.now,
    onError: throttled(opts.log, "limiter store error"),
  });

  const engine = opts.engine === undefined ? (config.PRODUCT_URL ? undefined : await buildEngine(config)) : opts.engine ?? undefined;
  const admission = engine
    ? createAdmission({
        // The engine's own size when built here: one worker on a GPU whatever POOL_SIZE
        // says (open-engine.ts). A caller's engine is sized by the config.
        poolSize: opts.engine === undefined ? engine.state().poolSize : config.POOL_SIZE,
        keyQueueMax: config.KEY_QUEUE_MAX,
        queueMax: config.QUEUE_MAX,
        testSharePercent: config.TEST_SHARE_PERCENT,
        testMaxWaitMs: config.TEST_MAX_WAIT_MS,
        maxRetryAfterS: Math.ceil(config.DEADLINE_MS / 1000),
        now,
      })
    : undefined;
  if (engine && admission) {
    engine.whenReady().then(
      () => {
        // On the CPU no warm-up inference to calibrate from: admission keeps its starting
        // guess until the first real job reports. On a GPU the start ends with a timed warm
        // run, the GPU's own time (docs/DECISIONS.md, "Admission's first estimate").
        const st = engine.state();
        if (st.warmRunMs !== undefined) admission.calibrate(st.warmRunMs);
        const { backend, model, poolSize, bandHelpers, warmRunMs, gpuPhase, gpuFallback } = st;
        opts.log({ level: gpuFallback ? "warn" : "info", msg: "engine ready", backend, model, poolSize, bandHelpers, warmRunMs, gpuPhase, gpuFallback });
      },
      () => {}, // a failed start is reported through engine.state() and /readyz
    );
    // auto on a GPU host: once the GPU takes the jobs from WebAssembly (or gives way),
    // admission follows its worker count and warm run time, and the log says so.
    engine.settled?.().then(() => {
      const st = engine.state();
      const { backend, model, poolSize, warmRunMs, gpuBatches, gpuFallback } = st;
      if (st.gpuPhase === "running") {
        admission.retune(poolSize, warmRunMs ?? NaN);
        opts.log({ level: "info", msg: "engine on the GPU", backend, model, poolSize, warmRunMs, maxBatch: gpuBatches?.max });
      } else opts.log({ level: "warn", msg: "engine stays on the CPU: the GPU gave way", backend, model, gpuFallback });
    });
  }
  const metrics = createMetrics();
  if (engine) metrics.watchEngine(engine, admission);
  const productBudget = createByteBudget(config.RECEIVE_BUDGET_BYTES);
  const gatewayBudget = createByteBudget(config.RECEIVE_BUDGET_BYTES);
  metrics.watchBudgets({ gateway: gatewayBudget, product: productBudget });
  // A hold lives as long as a request may (deadline) plus a margin for the capture itself.
  const billing = createBilling({ db, now, holdTtlMs: config.DEADLINE_MS + 60_000 });
  const reconciler = createReconciler({
    log: opts.log,
    capture: (requestId, amountKrw) => billing.capture(requestId, amountKrw),
  });

  const accounts = createAccounts({ db, now });
  const provider = paymentProvider(config, opts.log);
  const payments = {
    provider,
    topups: createTopups({
      db,
      now,
      billing,
      provider,
      refundPending: async (orgId: string) => (await accounts.getOrg(orgId))?.refundPending ?? false,
      log: opts.log,
    }),
    refunds: createRefunds({ db, billing, provider, now, log: opts.log }),
    reconciliation: createReconciliation({ db, provider, log: opts.log }),
  };

  return {
    config,
    now,
    db,
    limiter,
    accounts,
    billing,
    idempotency: createIdempotencyStore({ db, now }),
    reconciler,
    testQuota: createTestQuota({ db, now }),
    requestLog: createRequestLog({ db, now }),
    mailer: await createMailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, db, now }),
    payments,
    keys: createKeyService({ db, now, pepper, known }),
    engine,
    admission,
    modelLabel: engine ? await runningModelLabel(config) : undefined,
    productBudget,
    gatewayBudget,
    metrics,
    async close() {
      await engine?.dispose().catch(() => {});
      // Before the database closes: one last try at captures still pending.
      await reconciler.close().catch(() => {});
      await limiter.close().catch(() => {});
      await db.close().catch(() => {});
    },
  };
}

/** The provider PAYMENT_PROVIDER names (config.ts has refused the sandbox in production and Stripe without its secrets). */
function paymentProvider(config: Config, log: ServiceOptions["log"]): PaymentProvider | undefined {
  switch (config.PAYMENT_PROVIDER) {
    case "none":
      return undefined;
    case "sandbox":
      return createSandboxProvider();
    case "stripe":
      return createStripeProvider({ secretKey: config.STRIPE_SECRET_KEY!, apiUrl: config.STRIPE_API_URL, log });
  }
}

/** The model the service runs: MODEL, else the default every face uses (config.ts imports nothing of ours, so the default is applied here). */
export const servedModel = (config: Config): string => config.MODEL ?? DEFAULT_MODEL;

/**
 * The library's engine (src/engine/library/open-engine.ts), sized and placed by the config.
 * A model it cannot use (no card, a card that does not fit the graph, a missing file) stops
 * the start as a ConfigError naming the settings, before the server listens.
 */
async function buildEngine(config: Config): Promise<Engine> {
  try {
    return await openEngine({
      model: servedModel(config),
      card: config.MODEL_CARD,
      modelsDir: config.MODELS_DIR,
      backend: config.INFERENCE_BACKEND,
      threads: config.THREADS_PER_SESSION,
      workers: config.POOL_SIZE,
      stubDelayMs: config.STUB_DELAY_MS,
      collectCallingThread: true,
    });
  } catch (err) {
    if (!(err instanceof InferenceError) || err.code !== "model_unavailable") throw err;
    const card = config.MODEL_CARD === undefined ? "" : ` MODEL_CARD=${config.MODEL_CARD}`;
    throw new ConfigError(`MODEL=${servedModel(config)}${card}: ${err.message}`, { cause: err });
  }
}

/** At most one log line per second for a repeating store error (a Redis outage repeats). */
function throttled(log: ServiceOptions["log"], msg: string) {
  let last = 0;
  return (err: unknown) => {
    const t = Date.now();
    if (t - last < 1000) return;
    last = t;
    log({ level: "warn", msg, err: err instanceof Error ? err.message : String(err) });
  };
}

/**
 * X-PD-Model for a cut-out: the label of the model that made it, when the engine says which
 * (auto's GPU form on a GPU host; the configured model while WebAssembly serves, and after
 * the GPU gave way), else the configured model's (whose path, for a file of the operator's
 * own, the label reads).
 */
async function runningModelLabel(config: Config): Promise<(model?: string) => string | undefined> {
  const modelsDir = config.MODELS_DIR ?? PACKAGE_MODELS_DIR;
  const configured = await modelLabelFor(servedModel(config), modelsDir, config.MODEL_CARD);
  const forms = config.MODEL_CARD === undefined ? await gpuFormLabels(servedModel(config), modelsDir) : new Map<string, string>();
  return (model) => (model !== undefined ? forms.get(model) : undefined) ?? configured;
}
