// Observability: Prometheus metrics per service instance, the HTTP middleware that
// feeds them and writes the access log, and the /metrics route.
export { createMetrics, type Metrics, type GatewayStage, type ProductStage, type KeyMode, type ReleaseReason } from "./metrics.ts";
export { httpMetrics } from "./http.ts";
export { gatewayObserver, productObserver } from "./observers.ts";
export { registerMetricsRoute, METRICS_PATH } from "./route.ts";
