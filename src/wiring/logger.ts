// Structured JSON log lines, one per event, written by pino. Callers pass plain objects
// ({ msg, level?, ...fields }) through the `Log` function, so nothing else in the code
// knows pino is here. The line shape stays {"level":"info","time":"<ISO>","msg":...,
// <fields in the caller's order>}: test/support/server-process.ts reads the port from
// `"msg":"listening","port":N`, which is why the message travels inside the object
// (pino keeps an object's own key order) rather than as pino's separate message argument.
import { pino, type DestinationStream, type Level } from "pino";

export type Log = (event: Record<string, unknown>) => void;

export type LogLevel = Level | "silent";

const LEVELS: ReadonlySet<string> = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);

/**
 * Where a key could sit if a caller ever logged a header bag or a form: censored by
 * path. The gateway logs key labels only (test/gateway/secrets.test.ts); this is
 * defence in depth, not the mechanism.
 */
export const REDACT_PATHS: readonly string[] = [
  "apiKey",
  "authorization",
  "cookie",
  '["x-api-key"]',
  'headers["x-api-key"]',
  "headers.authorization",
  "headers.cookie",
  'headers["set-cookie"]',
  '*.headers["x-api-key"]',
  "*.headers.authorization",
  "*.headers.cookie",
  '*.headers["set-cookie"]',
];

/**
 * A logger at `level` writing to stdout, or to `dest` when given (tests write into a
 * buffer). Stdout is written asynchronously: a line goes out at once when no write is
 * in flight, and lines that come while one is wait and leave together. A synchronous
 * write per line was about 5 % of the gateway's CPU under the paid load, most
 * of it the pipe waking its reader once per line. What is waiting is written
 * synchronously at process exit (pino's exit hook: process.exit, an uncaught error, the
 * end of the event loop), so only a SIGKILL or a crash of the runtime itself loses the
 * lines of one write (test/observability/logger-exit.test.ts).
 */
export function createLogger(level: LogLevel, dest?: DestinationStream | ((line: string) => void)): Log {
  const stream: DestinationStream =
    typeof dest === "function" ? { write: (s: string) => dest(s.endsWith("\n") ? s.slice(0, -1) : s) } : dest ?? pino.destination({ dest: 1, sync: false });
  const options = {
    level,
    // No pid/hostname on every line: the process supervisor already knows them.
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const redacting = pino({ ...options, redact: { paths: [...REDACT_PATHS], censor: "[redacted]" } }, stream);
  // Redaction walks its paths on every line; in the refusal flood's CPU profile that was
  // a tenth of the time. A line with none of the paths' first fields and no
  // nested object (the access line, most others) has nothing to censor.
  const plain = pino(options, stream);
  return (event) => {
    const { level: wanted, ...rest } = event;
    const lvl = typeof wanted === "string" && LEVELS.has(wanted) ? (wanted as Level) : "info";
    (mayHoldRedactedPath(rest) ? redacting : plain)[lvl](rest);
  };
}

/** The first field of each redacted path (`headers` of `headers.cookie`); `*` for a wildcard. */
const REDACT_ROOTS: ReadonlySet<string> = new Set(REDACT_PATHS.map((p) => /^\[?"?([^".[\]]+)/.exec(p)![1]!));

/** True when a redacted path could match: a field named like a path's first one, or any nested object when a path starts with `*`. */
function mayHoldRedactedPath(event: Record<string, unknown>): boolean {
  for (const k in event) {
    if (REDACT_ROOTS.has(k)) return true;
    const v = event[k];
    if (REDACT_ROOTS.has("*") && v !== null && typeof v === "object") return true;
  }
  return false;
}
