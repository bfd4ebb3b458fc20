// The default one-process deployment: the gateway hands the parsed job straight to
// the product's runner (src/product/run-job.ts) — no second multipart parse, no copy
// of the body, no facts written to headers and read back, and no charge against the
// product's receive budget for bytes that were received once, by the gateway. The
// answer goes through the same resend rules as one over HTTP (src/gateway/upstream.ts).
import { inProcessRefusal, type ProductPort } from "../gateway/upstream.ts";
import type { JobRunner } from "../product/job.ts";

export function inProcessProduct(runner: JobRunner): ProductPort {
  return async ({ job }) => {
    const outcome = await runner.run(job);
    if (!outcome.ok) return inProcessRefusal(outcome);
    const { ok: _ok, ...image } = outcome;
    return { ok: true, image };
  };
}
