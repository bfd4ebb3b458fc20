// The only provider here: a sandbox that takes no money and approves every payment it
// started, unless told to decline (tests of the failure path).
import { randomBase62 } from "../db/index.ts";
import { fail } from "../http/api-error.ts";
import type { PaymentProvider } from "./provider.ts";

export function createSandboxProvider(opts: { decline?: (amountKrw: number) => boolean } = {}): PaymentProvider {
  return {
    name: "sandbox",
    async start() {
      return { ok: true, providerRef: `sbx_${randomBase62(20)}` };
    },
    async confirm({ providerRef, amountKrw }) {
      if (!providerRef.startsWith("sbx_")) return fail("not_found", "Unknown sandbox payment");
      if (opts.decline?.(amountKrw)) return fail("conflict", "The sandbox declined this payment");
      return { ok: true };
    },
  };
}
