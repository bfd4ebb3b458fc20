// How honest a Retry-After was: the refusal's whole seconds against the moment a retry
// got in, on the service's clock that the test moves (test/support/gated-engine.ts).
import assert from "node:assert/strict";

export interface Refusal {
  status: number;
  code: string;
  retryAfterS: number;
}

export async function refusalOf(res: Response): Promise<Refusal> {
  const body = (await res.json()) as { errors: { code: string }[] };
  const ra = res.headers.get("retry-after");
  assert.ok(ra !== null && /^\d+$/.test(ra), `a Retry-After in whole seconds, got ${ra}`);
  return { status: res.status, code: body.errors[0]!.code, retryAfterS: Number(ra) };
}

/**
 * The check of an honest Retry-After: a client that waits Retry-After is admitted within one job's
 * time of that (not refused again for longer), and the value is not more than one job
 * (plus the rounding up to whole seconds) beyond the moment it would have got in.
 */
export function assertHonest(refusal: Refusal, afterMs: number, jobMs: number): void {
  const announcedMs = refusal.retryAfterS * 1000;
  const why = `${refusal.code}: Retry-After ${refusal.retryAfterS} s, admitted after ${Math.round(afterMs)} ms, one job ${jobMs} ms`;
  assert.ok(afterMs <= announcedMs + jobMs, `too short: ${why}`);
  assert.ok(announcedMs <= afterMs + jobMs + 1000, `too long: ${why}`);
}
