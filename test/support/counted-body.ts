// A request body with no announced length, made of one chunk repeated, that counts what
// the server pulled: a test can then say how much of an upload was read before the
// answer. `totalBytes` is a cap far above the limit under test, so a server that
// buffered everything fails the test's assertion instead of hanging it.
export function countedBody(totalBytes: number, chunk: Uint8Array = new Uint8Array(64 * 1024).fill(0x41)) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(ctrl) {
        if (state.pulled >= totalBytes) return ctrl.close();
        state.pulled += chunk.byteLength;
        ctrl.enqueue(chunk);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 }, // pull only when someone reads
  );
  return { stream, state };
}
