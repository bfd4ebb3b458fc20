// Composition root: config → services → app → server, plus the hold (and idempotency key) sweeper and a
// graceful shutdown. Runs on Node (@hono/node-server) and Deno (Deno.serve).
// First import: from a checkout, a dist/ older than src/ stops here (require-fresh-dist.mjs).
import "./require-fresh-dist.mjs";
import { ConfigError, parseConfig, type Config } from "./config.ts";
import { buildApp } from "./wiring/app.ts";
import { logGpuAtStart } from "./wiring/gpu-at-start.ts";
import { createLogger } from "./wiring/logger.ts";
import { remoteAddress } from "./wiring/remote-address.ts";
import { createServices } from "./wiring/services.ts";
import { serve } from "./wiring/serve.ts";

function readConfig(): Config {
  try {
    return parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

const config = readConfig();
const log = createLogger(config.LOG_LEVEL);

let operatorToken = config.OPERATOR_TOKEN;
if (!operatorToken) {
  const random = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24))));
  operatorToken = `pdop_${random.replace(/\+/g, "-").replace(/\//g, "_")}`;
  // Printed once, on stderr and outside the JSON log stream, so it is not shipped to log storage.
  console.error(`OPERATOR_TOKEN was not set; generated for this run: ${operatorToken}`);
}

const services = await createServices(config, { log }).catch((err: unknown) => {
  // A setting found unusable only when used (MODEL, MODEL_CARD): named, not a stack trace.
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
});
services.metrics.collectProcessMetrics();
let shuttingDown = false;
const { app } = buildApp(services, { operatorToken, log, isShuttingDown: () => shuttingDown, remoteAddress });

if (services.engine) {
  const engine = services.engine;
  const t0 = Date.now();
  engine
    .whenReady()
    .then(
      () => log({ msg: "models warm", backend: engine.state().backend, poolSize: config.POOL_SIZE, threads: config.THREADS_PER_SESSION, ms: Date.now() - t0 }),
      (err: unknown) => log({ level: "error", msg: "models failed to start", err: err instanceof Error ? err.message : String(err) }),
    )
    // Then what the GPU check found: a warning when a GPU is there and goes unused.
    .then(() => logGpuAtStart(engine, log))
    .catch((err: unknown) => log({ level: "error", msg: "GPU check failed", err: err instanceof Error ? err.message : String(err) }));
}

const sweeper = setInterval(() => {
  services.billing.sweepExpired().then(
    (n) => {
      if (n === 0) return;
      services.metrics.holdsReleased.inc({ reason: "expired" }, n);
      log({ level: "warn", msg: "released expired holds", count: n });
    },
    (err: unknown) => log({ level: "error", msg: "hold sweep failed", err: err instanceof Error ? err.message : String(err) }),
  );
  // Idempotency-Keys past their 24 hours (migrations/0004).
  services.idempotency.purgeExpired().catch((err: unknown) =>
    log({ level: "error", msg: "idempotency key purge failed", err: err instanceof Error ? err.message : String(err) }),
  );
}, config.HOLD_SWEEP_INTERVAL_MS);
sweeper.unref?.();

const server = await serve(app.fetch, { port: config.PORT, hostname: config.HOST });
log({
  msg: "listening",
  port: server.port,
  host: config.HOST,
  mode: config.NODE_ENV,
  publicUrl: config.PUBLIC_URL,
  payments: config.PAYMENT_PROVIDER,
  database: services.db.kind,
  limiter: config.REDIS_URL ? "redis" : "in-process",
});
if (config.NODE_ENV === "production" && config.PUBLIC_URL === `http://localhost:${config.PORT}`) {
  // The default suits a bare machine tried locally; a reachable service names its own address.
  log({ level: "warn", msg: "PUBLIC_URL is not set: mailed links and the console's examples name http://localhost; set it to the address customers use" });
}

// Every public request ends by its own 140 s deadline (a 504 whose undo steps release
// its permits and hold), so waiting one deadline plus a margin for those steps lets
// everything in flight finish or fail cleanly. A request still running after that is
// stuck (a store not answering); it is abandoned with an error line, and what it took
// runs out by itself: its permits are leases (PERMIT_LEASE_MS) and its hold expires and
// is released by the next process's sweeper.
const SHUTDOWN_MARGIN_MS = 10_000;

async function shutdown(signal: string) {
  // A repeated signal is ignored: `npm start` and some supervisors forward a Ctrl-C or a
  // stop to the whole process group, so one operator action can arrive twice. SIGKILL
  // is the way to not wait.
  if (shuttingDown) return;
  shuttingDown = true;
  log({ msg: "shutting down", signal });
  clearInterval(sweeper);
  let code = 0;
  try {
    // Stop accepting; in-flight requests finish (their undo steps release permits and holds).
    await server.close(config.DEADLINE_MS + SHUTDOWN_MARGIN_MS);
    const left = (await services.metrics.httpInFlight.get()).values[0]?.value ?? 0;
    if (left > 0) log({ level: "error", msg: "requests still running at shutdown; abandoned", count: left });
    // Inference sessions disposed (pool workers terminated), then the limiter and the database.
    await services.close();
  } catch (err) {
    code = 1;
    log({ level: "error", msg: "shutdown failed", err: err instanceof Error ? err.message : String(err) });
  }
  log({ msg: "stopped", code });
  process.exit(code);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
