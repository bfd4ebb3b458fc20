// Sign-up and sign-in mails are written after the answer, from this queue: the request
// only checks the address's shape and the rate limits, then queues the job, the same
// steps whether or not the address has an account. Looking the address up, issuing the
// link and handing the mail to SMTP (or the outbox) happen here, so their time, which
// differs between a known and an unknown address, is not in the answer's.
//
// In process and in memory: a job lost with its process (a crash between the answer
// and the mail) leaves the person a "check your mail" page and no mail, and the page
// says to ask again. main.ts waits for the queue before closing the stores on shutdown.
// At most MAIL_QUEUE_MAX jobs wait; past that a request is refused 503 (the rate
// limits make that a flood, not a customer).

export const MAIL_QUEUE_MAX = 1000;

export interface MailQueue<J> {
  /** False when the queue is full (nothing queued). */
  push(job: J): boolean;
  /** Resolves once every job queued so far has run (a failed job is logged, not retried). */
  idle(): Promise<void>;
}

export function createMailQueue<J>(run: (job: J) => Promise<void>, onError: (err: unknown) => void, max = MAIL_QUEUE_MAX): MailQueue<J> {
  const waiting: J[] = [];
  let draining: Promise<void> | undefined;

  async function drain(): Promise<void> {
    // Started on a later turn of the event loop, after the request that queued the job
    // has answered.
    await new Promise<void>((r) => setTimeout(r, 0));
    for (let job = waiting.shift(); job !== undefined; job = waiting.shift()) {
      try {
        await run(job);
      } catch (err) {
        onError(err);
      }
    }
    draining = undefined;
  }

  return {
    push(job) {
      if (waiting.length >= max) return false;
      waiting.push(job);
      draining ??= drain();
      return true;
    },
    async idle() {
      while (draining) await draining;
    },
  };
}
