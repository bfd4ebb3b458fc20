// Adapters from the narrow observer ports the gateway and product declare (they know
// nothing of Prometheus) to this instance's metrics. Times arrive in milliseconds,
// Prometheus wants seconds.
import type { GatewayObserver } from "../gateway/deps.ts";
import type { ProductObserver } from "../product/run-job.ts";
import type { Metrics } from "./metrics.ts";

export function gatewayObserver(m: Metrics): GatewayObserver {
  return {
    stage: (stage, ms) => m.gatewayStage.observe([stage], ms / 1000),
    charged: (mode, krw) => m.capturedKrw.inc({ mode }, krw),
    released: () => m.holdsReleased.inc({ reason: "error" }),
    resent: (code) => m.resends.inc({ code }),
  };
}

export function productObserver(m: Metrics): ProductObserver {
  return {
    stage: (stage, ms) => m.productStage.observe({ stage }, Math.max(0, ms) / 1000),
  };
}
