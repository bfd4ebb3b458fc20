// Every Prometheus metric the service exports, on one Registry per service instance
// (never prom-client's global default registry: two apps in one test process must not
// share or collide). Label values are closed sets — route patterns, methods, status
// numbers, catalogue error codes, stage names, key modes — never key text, e-mails or
// request IDs, which would leak secrets and make one time series per request.
import type { ByteBudget } from "../http/byte-budget.ts";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { GatewayObserver } from "../gateway/deps.ts";
import type { ProductObserver } from "../product/run-job.ts";
import { HotCounter, HotHistogram } from "./hot-metrics.ts";

/** Stage names are the observers' own (one list each, where the stages are timed). */
export type GatewayStage = Parameters<GatewayObserver["stage"]>[0];
export type ProductStage = Parameters<ProductObserver["stage"]>[0];
export type KeyMode = "test" | "live";
/** Why a hold ended without a charge: the request failed, or the sweeper found it expired. */
export type ReleaseReason = "error" | "expired";

/** What the scrape reads from the engine and admission at scrape time (no polling timer). */
export interface EngineView {
  state(): { ready: boolean; poolSize: number; busy: number; queued: number; backend?: string; model?: string };
}
export interface AdmissionView {
  stats(): { inFlight: number; queued: number; avgJobMs: number };
}

// Seconds. From a cache-hot key lookup (~1 ms) to the 140 s gateway deadline.
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 45, 90, 140];

export interface Metrics {
  registry: Registry;
  /** Per request (hot-metrics.ts): label values in this order. */
  httpRequests: HotCounter<"route" | "method" | "status" | "code">;
  httpDuration: HotHistogram<"route" | "method">;
  httpInFlight: Gauge;
  gatewayStage: HotHistogram<"stage">;
  productStage: Histogram<"stage">;
  capturedKrw: Counter<"mode">;
  holdsReleased: Counter<"reason">;
  resends: Counter<"code">;
  /** Adds the pool and queue gauges, read from `engine`/`admission` on each scrape. */
  watchEngine(engine: EngineView, admission?: AdmissionView): void;
  /** Adds the receive budgets' bytes in use (a flood of large or slow uploads shows here). */
  watchBudgets(budgets: Record<"gateway" | "product", ByteBudget>): void;
  /** Node process metrics (CPU, memory, event loop lag, GC); for the real server only. */
  collectProcessMetrics(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  let engineWatched = false;
  let budgetsWatched = false;
  let processCollected = false;
  return {
    registry,
    httpRequests: new HotCounter({
      name: "pixeldrop_http_requests_total",
      help: "HTTP requests answered, by route pattern, method, status and error code (none on success)",
      labelNames: ["route", "method", "status", "code"] as const,
      registers,
    }),
    httpDuration: new HotHistogram({
      name: "pixeldrop_http_request_duration_seconds",
      help: "Time from receipt to the response being handed to the server, by route pattern",
      labelNames: ["route", "method"] as const,
      buckets: BUCKETS,
      registers,
    }),
    httpInFlight: new Gauge({
      name: "pixeldrop_http_requests_in_flight",
      help: "HTTP requests received and not yet answered",
      registers,
    }),
    gatewayStage: new HotHistogram({
      name: "pixeldrop_gateway_stage_duration_seconds",
      help: "Gateway time per stage of POST /v1.0/removebg (product includes resends and their waits)",
      labelNames: ["stage"] as const,
      buckets: BUCKETS,
      registers,
    }),
    productStage: new Histogram({
      name: "pixeldrop_product_stage_duration_seconds",
      help: "Product service time per stage: waiting for a pool worker, then the worker's decode, inference, compose and encode",
      labelNames: ["stage"] as const,
      buckets: BUCKETS,
      registers,
    }),
    capturedKrw: new Counter({
      name: "pixeldrop_captured_krw_total",
      help: "KRW charged on successful calls, by key mode (test keys are never charged)",
      labelNames: ["mode"] as const,
      registers,
    }),
    holdsReleased: new Counter({
      name: "pixeldrop_holds_released_total",
      help: "Reservations given back without a charge: by the failed request itself, or by the expiry sweeper",
      labelNames: ["reason"] as const,
      registers,
    }),
    resends: new Counter({
      name: "pixeldrop_gateway_resends_total",
      help: "Product calls the gateway sent again, by the error code of the attempt that was resent",
      labelNames: ["code"] as const,
      registers,
    }),
    watchEngine(engine, admission) {
      // Harness variants build several apps over one Services; register the gauges once.
      if (engineWatched) return;
      engineWatched = true;
      gauge(registry, "pixeldrop_pool_size", "Inference workers in the pool", () => engine.state().poolSize);
      gauge(registry, "pixeldrop_pool_busy", "Inference workers running a job now", () => engine.state().busy);
      gauge(registry, "pixeldrop_pool_queue_depth", "Jobs handed to the pool and waiting for a worker", () => engine.state().queued);
      gauge(registry, "pixeldrop_pool_ready", "1 when every worker has a warm model session", () => (engine.state().ready ? 1 : 0));
      // Which backend (wasm, webgpu, native) and model the sessions run, as labels of a
      // constant 1, so a dashboard can split the pool's numbers by where they ran.
      new Gauge({
        name: "pixeldrop_engine_info",
        help: "1, labelled with the backend and the model the inference sessions run",
        labelNames: ["backend", "model"] as const,
        registers: [registry],
        collect() {
          const st = engine.state();
          this.reset();
          this.set({ backend: st.backend ?? "starting", model: st.model ?? "unknown" }, 1);
        },
      });
      if (admission) {
        gauge(registry, "pixeldrop_product_in_flight", "Jobs admitted by the product service and not finished (running or queued)", () => admission.stats().inFlight);
        gauge(registry, "pixeldrop_product_queued", "Admitted jobs beyond the pool size, waiting their turn", () => admission.stats().queued);
        gauge(registry, "pixeldrop_product_job_estimate_seconds", "The admission's running estimate of one job's duration (drives deadline_unreachable)", () => admission.stats().avgJobMs / 1000);
      }
    },
    watchBudgets(budgets) {
      if (budgetsWatched) return;
      budgetsWatched = true;
      new Gauge({
        name: "pixeldrop_receive_budget_bytes_in_use",
        help: "Request-body bytes held by calls being received or run, of RECEIVE_BUDGET_BYTES, by the process's role",
        labelNames: ["role"] as const,
        registers: [registry],
        collect() {
          for (const [role, budget] of Object.entries(budgets)) this.set({ role }, budget.inUse());
        },
      });
    },
    collectProcessMetrics() {
      if (processCollected) return;
      processCollected = true;
      collectDefaultMetrics({ register: registry });
    },
  };
}

/** A gauge whose value is read when Prometheus scrapes, so it is never stale. */
function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}
