// What `pixeldrop remove` needs from whatever removes the backgrounds: the local model
// (local-remover.ts) or a running service (remote-remover.ts). main.ts drives either
// one with the same loop, progress bar, summary and exit codes.

export type RemoveOutcome =
  | { ok: true; png: Uint8Array }
  /** `message` is printed after "failed: <file>: ". `stop`: no later file can succeed either. */
  | { ok: false; message: string; stop?: boolean };

export interface Remover {
  remove(image: Uint8Array): Promise<RemoveOutcome>;
  /** The end of the summary line, e.g. "backend wasm". */
  describe(): string;
  close(): Promise<void>;
}
