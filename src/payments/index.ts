// Public surface of the payments module.
export type { PaymentProvider } from "./provider.ts";
export { createSandboxProvider } from "./sandbox.ts";
export { createTopups, TOPUP_AMOUNTS_KRW, type Topups, type Topup, type TopupDeps, type TopupState } from "./topups.ts";
