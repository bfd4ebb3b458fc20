// The HTTP application: public API, operator API, health, all sharing the request-ID
// middleware and the one error path. The product is reached through a port: the parsed
// job handed to the in-process runner by default, HTTP to PRODUCT_URL when split.
import { Hono } from "hono";
import { createAdminApp } from "../admin/app.ts";
import { createCallMoney } from "../billing/call-money.ts";
import { isLoopbackHost } from "../http/loopback-host.ts";
import { createConsoleApp } from "../console/app.tsx";
import { operatorAuth } from "../admin/auth.ts";
import { createTokenThrottle } from "../admin/token-throttle.ts";
import { OPERATOR_TOKEN_MIN_LENGTH } from "../config.ts";
import { clientAddress } from "../http/client-address.ts";
import { createGatewayApp } from "../gateway/app.ts";
import type { GatewayDeps } from "../gateway/deps.ts";
import { createPlayground } from "../gateway/playground.ts";
import type { AppEnv } from "../http/app-env.ts";
import { registerHealth } from "../http/health.ts";
import { installErrorHandling, requestIdMiddleware } from "../http/middleware.ts";
import { securityHeaders } from "../http/security-headers.ts";
import { storeUnavailable } from "../http/store-unavailable.ts";
import { gatewayObserver, httpMetrics, METRICS_PATH, productObserver, registerMetricsRoute } from "../metrics/index.ts";
import { registerOpenApiRoutes } from "../openapi/routes.ts";
import { registerStripeWebhook } from "../payments/index.ts";
import { PRODUCT_PATH } from "../http/product-path.ts";
import { createProductApp } from "../product/app.ts";
import { createJobRunner, type ProductDeps } from "../product/run-job.ts";
import { httpProduct, viaFetch } from "../gateway/product-http.ts";
import type { ProductPort } from "../gateway/upstream.ts";
import { inProcessProduct } from "./in-process-product.ts";
import { gatewayPorts, toKeyLookup } from "./gateway-ports.ts";
import { remoteProduct } from "./remote-product.ts";
import { servedModel, type Services } from "./services.ts";

export interface AppOptions {
  operatorToken: string;
  log: (e: Record<string, unknown>) => void;
  isShuttingDown: () => boolean;
  remoteAddress?: (req: Request, env: unknown) => string | undefined;
  sleep?: (ms: number) => Promise<void>;
  /** Replaces the product with one behind HTTP (tests of resends and upstream failures). */
  product?: (req: Request, signal: AbortSignal) => Promise<Response>;
}

export interface BuiltApp {
  app: Hono<AppEnv>;
  /** The internal product app, when this process runs the engine. */
  productApp?: Hono;
  /** Resolves once the console's sign-up and sign-in mails asked for so far are written (shutdown waits for it). */
  mailSent(): Promise<void>;
}

export function buildApp(s: Services, o: AppOptions): BuiltApp {
  const c = s.config;
  // The config holds OPERATOR_TOKEN to this; so does every other way of building the app.
  if (o.operatorToken.length < OPERATOR_TOKEN_MIN_LENGTH) throw new Error(`operatorToken: at least ${OPERATOR_TOKEN_MIN_LENGTH} characters`);
  const remote = o.remoteAddress ?? (() => undefined);
  // One gate for the operator API, /metrics and the product path, so their wrong tokens count together.
  const operatorGate = operatorAuth({
    token: o.operatorToken,
    throttle: createTokenThrottle(s.now),
    clientOf: (ctx) => clientAddress(ctx.req.header("x-forwarded-for"), c.TRUST_PROXY, remote(ctx.req.raw, ctx.env)),
  });
  const productDeps: ProductDeps | undefined =
    s.engine && s.admission
      ? {
          engine: s.engine,
          admission: s.admission,
          receiveBudget: s.productBudget,
          now: s.now,
          defaultDeadlineMs: c.DEADLINE_MS,
          modelLabel: s.modelLabel,
          isShuttingDown: o.isShuttingDown,
          log: o.log,
          observe: productObserver(s.metrics),
        }
      : undefined;
  // One runner serves both the in-process gateway and the HTTP endpoint for other gateways.
  const runner = productDeps ? createJobRunner(productDeps) : undefined;
  const productApp = productDeps ? createProductApp(productDeps, runner) : undefined;

  const product: ProductPort = o.product
    ? httpProduct(viaFetch(o.product))
    : c.PRODUCT_URL
      ? httpProduct(remoteProduct(c.PRODUCT_URL, o.operatorToken))
      : runner
        ? inProcessProduct(runner)
        : () => Promise.reject(new Error("no product service configured"));

  const app = new Hono<AppEnv>();
  app.use("*", requestIdMiddleware(s.now));
  // CSP, framing, nosniff, referrer and (behind an https PUBLIC_URL) HSTS on every answer.
  app.use("*", securityHeaders({ https: c.PUBLIC_URL?.startsWith("https:") ?? false }));
  // Counts and logs every answer, the error path's included (it runs inside this one).
  app.use("*", httpMetrics(s.metrics, o.log));
  installErrorHandling(app, o.log, storeUnavailable);

  registerHealth(app, {
    database: async () => {
      await s.db.query("SELECT 1");
      return { ok: true, detail: { kind: s.db.kind } };
    },
    limiter: async () => ({ ok: await s.limiter.ping(), detail: { kind: c.REDIS_URL ? "redis" : "in-process" } }),
    ...(s.engine
      ? {
          models: async () => {
            const st = s.engine!.state();
            // auto on a GPU host: ready as soon as WebAssembly serves; gpuPhase says whether the
            // GPU has taken over ("running"), is still starting, or gave way (gpuFallback: why);
            // gpu is what was found of the host's GPU (src/engine/inference/gpu-doctor.ts).
            const phase = st.gpuPhase ? { gpuPhase: st.gpuPhase, ...(st.gpuFallback ? { gpuFallback: st.gpuFallback } : {}) } : {};
            return { ok: st.ready, detail: { backend: st.backend, poolSize: st.poolSize, busy: st.busy, queued: st.queued, model: st.model ?? servedModel(c), ...phase, ...(c.MODEL_CARD ? { card: c.MODEL_CARD } : {}), ...(st.gpu ? { gpu: st.gpu } : {}), error: st.failed } };
          },
        }
      : {}),
  });

  // The interface description: GET /openapi.json and the HTML reference at /docs/api.
  registerOpenApiRoutes(app);

  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const gatewayDeps: GatewayDeps = {
    ports: gatewayPorts(s),
    money: createCallMoney({
      billing: s.billing,
      db: s.db,
      now: s.now,
      sleep,
      mailer: s.mailer,
      publicUrl: c.PUBLIC_URL,
      reconciler: s.reconciler,
      log: o.log,
    }),
    limiter: s.limiter,
    receiveBudget: s.gatewayBudget,
    product,
    settings: {
      deadlineMs: c.DEADLINE_MS,
      maxResends: c.MAX_RESENDS,
      resendMinRemainingMs: c.RESEND_MIN_REMAINING_MS,
      resendDefaultWaitS: c.RESEND_DEFAULT_WAIT_S,
      globalConcurrency: c.GLOBAL_CONCURRENCY,
      orgLiveConcurrency: c.ORG_LIVE_CONCURRENCY,
      testSharePercent: c.TEST_SHARE_PERCENT,
      testMaxWaitMs: c.TEST_MAX_WAIT_MS,
      permitLeaseMs: c.PERMIT_LEASE_MS,
      invalidKeyLimit: c.INVALID_KEY_LIMIT,
      invalidKeyWindowS: c.INVALID_KEY_WINDOW_S,
      trustProxy: c.TRUST_PROXY,
    },
    now: s.now,
    sleep,
    remoteAddress: remote,
    log: o.log,
    observe: gatewayObserver(s.metrics),
    jobEndEveryMs: s.admission && !c.PRODUCT_URL && !o.product ? () => s.admission!.stats().avgJobMs / c.POOL_SIZE : undefined,
  };
  app.route("/", createGatewayApp(gatewayDeps));
  // Prometheus scrapes with the operator token (bearer_token in the scrape config):
  // call counts, charges and error rates are business data, and one token keeps one
  // secret to rotate.
  app.use(METRICS_PATH, operatorGate);
  registerMetricsRoute(app, s.metrics);
  if (productApp) {
    // Served for gateways in other processes (PRODUCT_URL points here). It bills
    // nothing itself, so only holders of the operator token may call it.
    app.use(PRODUCT_PATH, operatorGate);
    app.route("/", productApp);
  }
  app.route(
    "/admin/v1",
    createAdminApp({ accounts: s.accounts, billing: s.billing, keys: s.keys, requestLog: s.requestLog, refunds: s.payments.refunds, reconciliation: s.payments.reconciliation, operatorGate }),
  );
  // The provider's word that a payment went through: the only way money is credited.
  if (c.PAYMENT_PROVIDER === "stripe") registerStripeWebhook(app, { topups: s.payments.topups, secret: c.STRIPE_WEBHOOK_SECRET!, now: s.now, log: o.log });
  // The customer console (pages under /console, landing page at /).
  const consoleApp = createConsoleApp({
    db: s.db,
    now: s.now,
    accounts: s.accounts,
    billing: s.billing,
    keys: s.keys,
    requestLog: s.requestLog,
    testQuota: s.testQuota,
    mailer: s.mailer,
    topups: s.payments.topups,
    publicUrl: c.PUBLIC_URL,
    sessionSecret: c.SESSION_SECRET,
    // Every mailed sign-in link, to anyone who can reach the page: only for a developer's own machine.
    devMailbox: c.NODE_ENV === "development" && isLoopbackHost(c.HOST) && s.mailer.kind === "outbox",
    trustProxy: c.TRUST_PROXY,
    remoteAddress: remote,
    log: o.log,
    // The playground removes as the app's test key through the gateway's own handler.
    playground: createPlayground(gatewayDeps, async (appId) => toKeyLookup(await s.keys.lookupCurrent(appId, "test"))),
  });
  app.route("/", consoleApp.app);
  return { app, productApp, mailSent: consoleApp.mailSent };
}
