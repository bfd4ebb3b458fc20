// Decides, before any work starts, whether a request can be taken, and then hands the
// taken ones to the workers in order (live before test, see schedule.ts). Refusals:
// per-key queue depth (key_queue_full), total capacity or the test share of it
// (queue_full), and work that could not end before its deadline given the measured
// time per job (deadline_unreachable). They are "before processing", so the gateway may
// resend them (spec §7 Retry), and each carries a Retry-After worked out from the same
// forecast: when the slot it lacks is expected to free, or by how much it misses.
//
// The time per job is the workers' own service time (what the pipeline reports as
// processingMs), never the time a job spent waiting for a worker: after a burst the
// waits are minutes long, and counting them made an idle service refuse everything.
// It is kept per tier: a preview decodes and composes a fraction of the pixels of a
// full-size cut-out (a reduced-scale JPEG decode, src/engine/pipeline/pipeline.ts), so on a
// GPU host it takes about half the time of a full one; one average for both would
// refuse previews that fit and admit full-size jobs that do not.
import { fail, type Failure } from "../http/api-error.ts";
import { RETRY_AFTER_MAX_S, retryAfterSeconds } from "../http/retry-after.ts";
import { testShareOf, type CallClass } from "../limits/test-share.ts";
import { forecast, pickClass, type QueuedJob } from "./schedule.ts";
import type { Tier } from "../contract/tiers.ts";

export interface AdmissionOptions {
  poolSize: number;
  keyQueueMax: number;
  /** Jobs that may wait beyond the ones running: capacity is poolSize + queueMax. */
  queueMax: number;
  now: () => number;
  /** Starting guess of one job's service time, replaced as real jobs finish. */
  initialJobMs?: number;
  /** Share of the capacity test-key jobs may hold (TEST_SHARE_PERCENT, default 50). */
  testSharePercent?: number;
  /** A test job that has waited this long goes before live ones (TEST_MAX_WAIT_MS). */
  testMaxWaitMs?: number;
  /** Longest Retry-After sent, in seconds (the deadline). */
  maxRetryAfterS?: number;
}

export type Turn = { ok: true } | Failure;

export interface Ticket {
  /**
   * Resolves when a worker is free for this job. A job whose deadline passes while it
   * waits is not started (deadline_unreachable): nobody is waiting for its answer.
   */
  start(): Promise<Turn>;
  /** Call once when the job ends, with the worker's own processing time (undefined if unknown). */
  done(serviceMs?: number): void;
}

export interface AdmissionStats {
  inFlight: number;
  queued: number;
  queuedLive: number;
  queuedTest: number;
  running: number;
  /** The estimate of a full-size job, the larger of the two. */
  avgJobMs: number;
  /** The estimate of each tier's job. */
  jobMsByTier: Record<Tier, number>;
}

export interface Admission {
  /** `tier`: what the job makes (default full), whose own measured time the forecast uses. */
  admit(key: string, deadlineMs: number, kind?: CallClass, tier?: Tier): { ok: true; ticket: Ticket } | Failure;
  stats(): AdmissionStats;
  /**
   * Replaces the starting guess with a measured job time, unless real jobs
   * have already finished. A guess far below the real time would let a first wave queue
   * past its deadline (504) instead of being refused at once with Retry-After.
   */
  calibrate(jobMs: number): void;
  /**
   * The engine changed under it (auto handed its jobs from WebAssembly to the GPU): its
   * worker count, and a measured job time that replaces the estimate until real jobs report.
   */
  retune(poolSize: number, jobMs: number): void;
}

interface Job extends QueuedJob {
  tier: Tier;
  key: string;
  deadline: number;
  startedAt?: number;
  wake?: (turn: Turn) => void;
  turn?: Turn;
  finished?: boolean;
}

export function createAdmission(opts: AdmissionOptions): Admission {
  let poolSize = Math.max(1, opts.poolSize);
  let capacity = poolSize + opts.queueMax;
  let testCap = testShareOf(capacity, opts.testSharePercent ?? 50);
  const testMaxWaitMs = opts.testMaxWaitMs ?? 30_000;
  const maxS = opts.maxRetryAfterS ?? RETRY_AFTER_MAX_S;
  const seconds = (ms: number) => retryAfterSeconds(ms, maxS);
  // Per tier: the running estimate, and whether a real job of that tier has reported.
  const estimate: Record<Tier, { ms: number; measured: boolean }> = {
    preview: { ms: opts.initialJobMs ?? 3000, measured: false },
    full: { ms: opts.initialJobMs ?? 3000, measured: false },
  };
  /** A tier's estimate; until one of its own jobs reports, the other tier's measured one if any. */
  const jobMsOf = (tier: Tier): number => {
    const own = estimate[tier];
    const other = estimate[tier === "full" ? "preview" : "full"];
    return own.measured || !other.measured ? own.ms : other.ms;
  };
  const jobMs = (j: Job) => jobMsOf(j.tier);
  const running = new Set<Job>();
  const queues: Record<CallClass, Job[]> = { live: [], test: [] };
  const perKey = new Map<string, Set<Job>>();
  let testHeld = 0;

  const inFlight = () => running.size + queues.live.length + queues.test.length;

  /** Expected end of every admitted job (plus `extra`, placed as a new arrival). */
  function plan(t: number, extra?: Job): Map<Job, number> {
    const freeAt: number[] = [];
    const ends = new Map<Job, number>();
    for (const j of running) {
      const end = Math.max(t, (j.startedAt ?? t) + jobMs(j));
      ends.set(j, end);
      freeAt.push(end);
    }
    while (freeAt.length < poolSize) freeAt.push(t);
    const live = extra?.kind === "live" ? [...queues.live, extra] : queues.live;
    const test = extra?.kind === "test" ? [...queues.test, extra] : queues.test;
    for (const [j, end] of forecast(freeAt, live, test, jobMs, testMaxWaitMs).ends) ends.set(j, end);
    return ends;
  }

  /** Milliseconds until the first of `jobs` is expected to end: when the slot it holds frees. */
  function untilFirstEnd(t: number, jobs: Iterable<Job>): number {
    const ends = plan(t);
    let first = Infinity;
    for (const j of jobs) first = Math.min(first, ends.get(j) ?? Infinity);
    return first === Infinity ? jobMsOf("full") : first - t;
  }

  function release(job: Job): void {
    if (job.finished) return;
    job.finished = true;
    if (!running.delete(job)) {
      const q = queues[job.kind];
      const i = q.indexOf(job);
      if (i >= 0) q.splice(i, 1);
    }
    if (job.kind === "test") testHeld--;
    const mine = perKey.get(job.key);
    mine?.delete(job);
    if (mine && mine.size === 0) perKey.delete(job.key);
  }

  function settle(job: Job, turn: Turn): void {
    job.turn = turn;
    job.wake?.(turn);
  }

  /** Gives free workers to waiting jobs, in schedule order. */
  function pump(): void {
    while (running.size < poolSize) {
      const t = opts.now();
      const kind = pickClass(queues.live, queues.test, t, testMaxWaitMs);
      if (!kind) return;
      const job = queues[kind].shift()!;
      if (job.deadline <= t) {
        release(job);
        settle(job, fail("deadline_unreachable", "The request's deadline passed before a worker was free", seconds(jobMs(job))));
        continue;
      }
      job.startedAt = t;
      running.add(job);
      settle(job, { ok: true });
    }
  }

  return {
    admit(key, deadlineMs, kind = "live", tier = "full") {
      const t = opts.now();
      const mine = perKey.get(key);
      if (mine && mine.size >= opts.keyQueueMax) {
        return fail("key_queue_full", `This key already has ${mine.size} requests in progress`, seconds(untilFirstEnd(t, mine)));
      }
      if (inFlight() >= capacity) {
        return fail("queue_full", undefined, seconds(untilFirstEnd(t, [...running, ...queues.live, ...queues.test])));
      }
      if (kind === "test" && testHeld >= testCap) {
        const tests = [...running, ...queues.test].filter((j) => j.kind === "test");
        return fail("queue_full", "Test keys may use only part of the processing queue; live keys go first", seconds(untilFirstEnd(t, tests)));
      }
      const job: Job = { kind, tier, key, deadline: deadlineMs, enqueuedAt: t };
      const end = plan(t, job).get(job) ?? t + jobMs(job);
      if (end > deadlineMs) {
        // A request sent `end - deadline` later, with the same time budget, would fit.
        return fail("deadline_unreachable", "Processing could not finish before the request's deadline", seconds(end - deadlineMs));
      }
      queues[kind].push(job);
      if (kind === "test") testHeld++;
      perKey.set(key, (mine ?? new Set()).add(job));
      pump();
      return {
        ok: true,
        ticket: {
          start: () => (job.turn ? Promise.resolve(job.turn) : new Promise<Turn>((resolve) => (job.wake = resolve))),
          done(serviceMs) {
            if (job.finished) return;
            const ran = job.startedAt !== undefined;
            release(job);
            if (ran && serviceMs !== undefined && Number.isFinite(serviceMs) && serviceMs > 0) {
              // Exponentially weighted so the estimate follows load and model changes.
              const e = estimate[job.tier];
              e.ms = e.measured ? e.ms * 0.8 + serviceMs * 0.2 : serviceMs;
              e.measured = true;
            }
            // A job given up while still queued (its caller left) never gets a turn.
            if (!job.turn) settle(job, fail("deadline_unreachable"));
            pump();
          },
        },
      };
    },
    calibrate(ms) {
      if (!Number.isFinite(ms) || ms <= 0) return;
      for (const e of Object.values(estimate)) if (!e.measured) e.ms = ms;
    },
    retune(size, jobMs) {
      poolSize = Math.max(1, size);
      capacity = poolSize + opts.queueMax;
      testCap = testShareOf(capacity, opts.testSharePercent ?? 50);
      if (Number.isFinite(jobMs) && jobMs > 0) {
        // Both tiers start again from it: what was measured was another engine's.
        for (const e of Object.values(estimate)) {
          e.ms = jobMs;
          e.measured = false;
        }
      }
      pump();
    },
    stats: () => ({
      inFlight: inFlight(),
      queued: queues.live.length + queues.test.length,
      queuedLive: queues.live.length,
      queuedTest: queues.test.length,
      running: running.size,
      avgJobMs: Math.round(Math.max(jobMsOf("full"), jobMsOf("preview"))),
      jobMsByTier: { preview: Math.round(jobMsOf("preview")), full: Math.round(jobMsOf("full")) },
    }),
  };
}
