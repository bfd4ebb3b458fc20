// Decides, before any work starts, whether a request can be taken: per-key queue
// depth, total queue depth, and whether it could finish before its deadline given the
// pool's recent speed. Rejections here are "before processing", so the gateway may
// resend them (spec §7 Retry).
import { fail, type Failure } from "../http/api-error.ts";

export interface AdmissionOptions {
  poolSize: number;
  keyQueueMax: number;
  queueMax: number;
  now: () => number;
  /** Starting guess of one job's duration, replaced as real jobs finish. */
  initialJobMs?: number;
}

export interface Ticket {
  /** Call once when the job ends, with its duration (undefined if it failed early). */
  done(durationMs?: number): void;
}

export interface Admission {
  admit(key: string, deadlineMs: number): ({ ok: true; ticket: Ticket } | Failure);
  stats(): { inFlight: number; queued: number; avgJobMs: number };
  /**
   * Replaces the starting guess with a measured one (the warm-up run), unless real jobs
   * have already finished. A guess far below the real time would let a first wave queue
   * past its deadline (504) instead of being refused at once with Retry-After.
   */
  calibrate(jobMs: number): void;
}

export function createAdmission(opts: AdmissionOptions): Admission {
  const poolSize = Math.max(1, opts.poolSize);
  let avgJobMs = opts.initialJobMs ?? 3000;
  let inFlight = 0;
  let measured = false;
  const perKey = new Map<string, number>();

  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

  return {
    admit(key, deadlineMs) {
      const mine = perKey.get(key) ?? 0;
      if (mine >= opts.keyQueueMax) {
        return fail("key_queue_full", `This key already has ${mine} requests in progress`, seconds(avgJobMs));
      }
      if (inFlight >= poolSize + opts.queueMax) {
        return fail("queue_full", undefined, seconds(avgJobMs));
      }
      // Jobs ahead of this one that have no worker yet, shared across the pool.
      const waitingAhead = Math.max(0, inFlight - poolSize + 1);
      const expectedStart = opts.now() + Math.ceil(waitingAhead / poolSize) * avgJobMs;
      const expectedEnd = expectedStart + avgJobMs;
      if (expectedEnd > deadlineMs) {
        return fail(
          "deadline_unreachable",
          "Processing could not finish before the request's deadline",
          seconds(expectedStart - opts.now()),
        );
      }
      inFlight++;
      perKey.set(key, mine + 1);
      let finished = false;
      return {
        ok: true,
        ticket: {
          done(durationMs) {
            if (finished) return;
            finished = true;
            inFlight--;
            const left = (perKey.get(key) ?? 1) - 1;
            if (left <= 0) perKey.delete(key);
            else perKey.set(key, left);
            // Exponentially weighted so the estimate follows load and model changes.
            if (durationMs !== undefined && durationMs > 0) {
              avgJobMs = measured ? avgJobMs * 0.8 + durationMs * 0.2 : durationMs;
              measured = true;
            }
          },
        },
      };
    },
    calibrate(jobMs) {
      if (!measured && Number.isFinite(jobMs) && jobMs > 0) avgJobMs = jobMs;
    },
    stats: () => ({ inFlight, queued: Math.max(0, inFlight - poolSize), avgJobMs: Math.round(avgJobMs) }),
  };
}
