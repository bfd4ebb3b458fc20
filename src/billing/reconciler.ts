// Captures the holds of calls whose image was delivered while the capture's outcome
// was unknown (the store stayed away past the request's deadline, see
// capture-retry.ts). A capture is idempotent per request ID, so asking again
// once the store is back either finds the charge that was made or makes it now.
//
// It also gives back the holds a store error left behind: a reserve whose outcome is
// unknown (it may still commit, abandon.ts) and a release that failed. Asked again the
// same way until the store answers, so a hold nobody uses does not keep the customer's
// credit until the sweeper. The same goes for what a call took besides its hold when
// that statement failed with a store error: its Idempotency-Key claim and its free
// test call (given-back.ts).
//
// Kept in memory: the store is exactly what is unavailable when a hold is handed over.
// What this cannot cover (docs/RELIABILITY.md "Money windows"): a process that dies
// with holds still pending, and an outage longer than the hold's life (the sweeper then
// releases the hold and the call stays free); both are logged, neither overcharges.
import type { Failure } from "../http/api-error.ts";
import { isStoreUnavailable } from "../http/store-unavailable.ts";

export interface ReconcilerDeps {
  /** The ledger's capture: a refusal is a value; a store outage throws. */
  capture: (requestId: string, amountKrw: number) => Promise<{ ok: true } | Failure>;
  log: (e: Record<string, unknown>) => void;
  /** Pause between rounds while holds are pending. */
  intervalMs?: number;
}

export interface Reconciler {
  /** Hands over a hold whose capture outcome is unknown; `afterCapture` runs once it is captured (e.g. its log row). */
  add(requestId: string, amountKrw: number, afterCapture?: () => Promise<void>): void;
  /**
   * Hands over the give-back of a hold a store error left (a reserve whose outcome is
   * unknown, a failed release): `attempt` (idempotent: the ledger's abandon or release)
   * is run each round until it no longer throws a store error. `what` names what is
   * given back (a request may hand over its hold and its claim: one entry each).
   */
  giveBack(requestId: string, attempt: () => Promise<unknown>, what?: GivenBack): void;
  /** One round over every pending hold; resolves with how many are still pending. */
  runOnce(): Promise<number>;
  pending(): number;
  /** Stops the timer after one last round; resolves with what is left (logged). */
  close(): Promise<number>;
}

export const RECONCILE_INTERVAL_MS = 1_000;

export type GivenBack = "hold" | "idempotency key" | "free call";

export function createReconciler(d: ReconcilerDeps): Reconciler {
  const intervalMs = d.intervalMs ?? RECONCILE_INTERVAL_MS;
  const pending = new Map<string, { amountKrw: number; afterCapture?: () => Promise<void> }>();
  const givingBack = new Map<string, { requestId: string; what: GivenBack; attempt: () => Promise<unknown> }>();
  const size = () => pending.size + givingBack.size;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<number> | undefined;
  let closed = false;

  function schedule(): void {
    if (timer || closed || size() === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void runOnce().then(schedule);
    }, intervalMs);
    // Pending holds must not keep a finished process alive; close() makes the last try.
    (timer as { unref?: () => void }).unref?.();
  }

  async function round(): Promise<number> {
    for (const [requestId, { amountKrw, afterCapture }] of [...pending]) {
      try {
        // Asked again each round until the step after it is done too (a capture is idempotent).
        const captured = await d.capture(requestId, amountKrw);
        if (!captured.ok) {
          // Refused (e.g. the sweeper released it after a very long outage): the call stays free.
          pending.delete(requestId);
          d.log({ level: "error", msg: "reconcile capture refused", requestId, amountKrw, err: `${captured.code}: ${captured.title ?? ""}` });
          continue;
        }
        await afterCapture?.();
        pending.delete(requestId);
        d.log({ level: "warn", msg: "reconciled capture", requestId, amountKrw });
      } catch (err) {
        if (isStoreUnavailable(err)) continue; // still away: next round
        // Not an outage: a bug, which asking again will not mend. The call stays free.
        pending.delete(requestId);
        d.log({ level: "error", msg: "reconcile capture failed", requestId, amountKrw, err: err instanceof Error ? err.message : String(err) });
      }
    }
    for (const [id, { requestId, what, attempt }] of [...givingBack]) {
      try {
        await attempt();
        givingBack.delete(id);
        d.log({ level: "warn", msg: `${what} given back after a store error`, requestId });
      } catch (err) {
        if (isStoreUnavailable(err)) continue; // still away: next round
        // Not an outage: asking again will not mend it; a hold's sweeper releases it at its
        // expiry, a claim's lease ends, a free call stays used.
        givingBack.delete(id);
        d.log({ level: "error", msg: `${what} give-back failed`, requestId, err: err instanceof Error ? err.message : String(err) });
      }
    }
    return size();
  }

  function runOnce(): Promise<number> {
    // One round at a time: a hold is never captured by two rounds at once.
    running ??= round().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    add(requestId, amountKrw, afterCapture) {
      pending.set(requestId, { amountKrw, afterCapture });
      schedule();
    },
    giveBack(requestId, attempt, what = "hold") {
      givingBack.set(`${what} ${requestId}`, { requestId, what, attempt });
      schedule();
    },
    runOnce,
    pending: size,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const left = size() ? await runOnce() : 0;
      if (left > 0) d.log({ level: "error", msg: "holds left unreconciled at shutdown", count: left, requestIds: [...pending.keys(), ...givingBack.keys()] });
      return left;
    },
  };
}
