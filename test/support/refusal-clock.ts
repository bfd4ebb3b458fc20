// Measures how honest a Retry-After was: after a refusal, the same call is sent again
// every `everyMs` until it is no longer refused, and the time that took is compared
// with what the refusal announced. Real time: the stand-in engines hold jobs for a
// fixed real duration, and assertions leave at least one job's time of margin.
import assert from "node:assert/strict";

export interface Refusal {
  status: number;
  code: string;
  retryAfterS: number;
  at: number;
}

export async function refusalOf(res: Response): Promise<Refusal> {
  const at = performance.now();
  const body = (await res.json()) as { errors: { code: string }[] };
  const ra = res.headers.get("retry-after");
  assert.ok(ra !== null && /^\d+$/.test(ra), `a Retry-After in whole seconds, got ${ra}`);
  return { status: res.status, code: body.errors[0]!.code, retryAfterS: Number(ra), at };
}

/**
 * Sends `call` until it is not refused with `code`; returns the admitted answer (still
 * unread: it may be running) and how many ms after the refusal it was admitted.
 * `admitted` tells a call that got in from one refused again.
 */
export async function retryUntilAdmitted(
  refusal: Refusal,
  call: () => Promise<{ admitted: boolean; done: Promise<Response> }>,
  o: { everyMs: number; timeoutMs: number },
): Promise<{ afterMs: number; done: Promise<Response> }> {
  const until = refusal.at + o.timeoutMs;
  for (;;) {
    const sentAt = performance.now();
    const attempt = await call();
    if (attempt.admitted) return { afterMs: sentAt - refusal.at, done: attempt.done };
    if (performance.now() > until) throw new Error(`still refused ${o.timeoutMs} ms after the first ${refusal.code}`);
    await new Promise((r) => setTimeout(r, o.everyMs));
  }
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
