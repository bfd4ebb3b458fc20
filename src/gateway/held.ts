// What one paid call has taken (its share of the receive budget, an Idempotency-Key
// claim, concurrency permits, a free test call, a hold) and how each goes back. The
// route handler owns the list: each step returns what it took with its give-back,
// the handler adds it here, and one finally gives everything back, newest first,
// whatever the exit (an answer, a refusal, a throw). Some things stand when the call
// succeeds (a charged hold, a used free call, a completed claim): those are given back
// only when it did not.

export interface Held {
  /** Given back at the end, whatever the outcome. */
  always(giveBack: () => Promise<unknown>): void;
  /** Given back at the end unless the call succeeded. */
  unlessSucceeded(giveBack: () => Promise<unknown>): void;
  /** The call succeeded (its charge stands, or may): what stands on success is kept. */
  succeed(): void;
  readonly succeeded: boolean;
  /** Gives back what was taken, newest first; a give-back that fails is reported and the rest still run. */
  giveBackAll(onError: (err: unknown) => void): Promise<void>;
}

export function createHeld(): Held {
  const taken: { giveBack: () => Promise<unknown>; keptOnSuccess: boolean }[] = [];
  let succeeded = false;
  return {
    always: (giveBack) => void taken.push({ giveBack, keptOnSuccess: false }),
    unlessSucceeded: (giveBack) => void taken.push({ giveBack, keptOnSuccess: true }),
    succeed: () => void (succeeded = true),
    get succeeded() {
      return succeeded;
    },
    async giveBackAll(onError) {
      while (taken.length > 0) {
        const t = taken.pop()!;
        if (succeeded && t.keptOnSuccess) continue;
        try {
          await t.giveBack();
        } catch (err) {
          onError(err);
        }
      }
    },
  };
}
