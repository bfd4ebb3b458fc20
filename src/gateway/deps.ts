// Everything the public gateway is built from; assembled in src/wiring/app.ts.
import type { Limiter } from "../limits/index.ts";
import type { ByteBudget } from "../http/byte-budget.ts";
import type { ProxyTrust } from "../http/proxy-trust.ts";
import type { GatewayPorts, MoneyPort } from "./ports.ts";
import type { ProductPort } from "./upstream.ts";

export interface GatewaySettings {
  deadlineMs: number;
  maxResends: number;
  resendMinRemainingMs: number;
  resendDefaultWaitS: number;
  globalConcurrency: number;
  orgLiveConcurrency: number;
  /** Share (%) of globalConcurrency test-key calls may hold (TEST_SHARE_PERCENT). */
  testSharePercent: number;
  /** A test call waiting at a cap goes before live ones once it has waited this long (TEST_MAX_WAIT_MS). */
  testMaxWaitMs: number;
  /** Permit lease; renewed every third of it while the request runs. */
  permitLeaseMs: number;
  invalidKeyLimit: number;
  invalidKeyWindowS: number;
  /** TRUST_PROXY: which proxies may name the client (src/http/proxy-trust.ts). */
  trustProxy: ProxyTrust;
}

export interface GatewayDeps {
  ports: GatewayPorts;
  /** The money of a paid call: hold, charge, release, allowance, reconciler handover (src/billing/call-money.ts). */
  money: MoneyPort;
  limiter: Limiter;
  receiveBudget: ByteBudget;
  /** Sends one attempt to the product: the parsed job in process, or over HTTP with PRODUCT_URL. */
  product: ProductPort;
  settings: GatewaySettings;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** The peer address as the runtime sees it, when known. */
  remoteAddress: (req: Request, env: unknown) => string | undefined;
  log: (event: Record<string, unknown>) => void;
  /** Where stage times and money events are reported (the metrics); absent in most tests. */
  observe?: GatewayObserver;
  /** How often a job ends in the in-process product (ms), when there is one: the first Retry-After of a full cap. */
  jobEndEveryMs?: () => number | undefined;
}

/** What the gateway measures, without knowing who records it. Times in milliseconds. */
export interface GatewayObserver {
  stage(stage: "authenticate" | "limits" | "reserve" | "product" | "capture", ms: number): void;
  /** A successful call; `krw` is what was charged (0 for a test key). */
  charged(mode: "test" | "live", krw: number): void;
  /** A hold given back because the request failed. */
  released(): void;
  /** A product attempt that will be sent again, by its error code. */
  resent(code: string): void;
}
