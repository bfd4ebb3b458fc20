// Everything the public gateway is built from; assembled in main.ts.
import type { Limiter } from "../limits/index.ts";
import type { ByteBudget } from "../http/byte-budget.ts";
import type { GatewayPorts } from "./ports.ts";

export interface GatewaySettings {
  deadlineMs: number;
  maxResends: number;
  resendMinRemainingMs: number;
  resendDefaultWaitS: number;
  globalConcurrency: number;
  orgLiveConcurrency: number;
  /** Permit lease; renewed every third of it while the request runs. */
  permitLeaseMs: number;
  invalidKeyLimit: number;
  invalidKeyWindowS: number;
  trustProxy: boolean;
}

export interface GatewayDeps {
  ports: GatewayPorts;
  limiter: Limiter;
  receiveBudget: ByteBudget;
  /** Sends one attempt to the product service (in-process app or PRODUCT_URL). */
  product: (req: Request, signal: AbortSignal) => Promise<Response>;
  settings: GatewaySettings;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** The peer address as the runtime sees it, when known. */
  remoteAddress: (req: Request, env: unknown) => string | undefined;
  log: (event: Record<string, unknown>) => void;
}
