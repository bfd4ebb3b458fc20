// The shared control block between a test and killable-pipeline-worker.ts: an
// Int32Array over a SharedArrayBuffer, read and written with Atomics.
export const JOBS_STARTED = 0; // jobs that reached a worker
export const MODE = 1; // what a held job does next
export const WAIT = 0;
export const DIE = 1;
export const GO = 2;

export interface KillableData {
  inputSize: number;
  control: SharedArrayBuffer;
}
