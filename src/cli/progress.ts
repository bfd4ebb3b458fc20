// A one-line progress bar on a terminal (redrawn in place), plain lines otherwise, so
// CI logs stay readable.
export interface Progress {
  update(done: number, label: string): void;
  finish(): void;
}

export function createProgress(total: number, out: NodeJS.WriteStream = process.stderr): Progress {
  const width = 24;
  const started = Date.now();
  return {
    update(done, label) {
      const filled = total === 0 ? width : Math.round((done / total) * width);
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      const line = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} ${secs}s ${label}`;
      if (out.isTTY) out.write(`\r\x1b[2K${line.slice(0, (out.columns ?? 100) - 1)}`);
      else out.write(`${line}\n`);
    },
    finish() {
      if (out.isTTY) out.write("\n");
    },
  };
}
