// Waits for a condition observed from outside (a process, a store): reads every 25 ms
// until `done` holds, or fails with the last value read.
export async function poll<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
