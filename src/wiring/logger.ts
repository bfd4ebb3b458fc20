// Structured JSON log lines, one per event, written by pino. Callers pass plain objects
// ({ msg, level?, ...fields }) through the `Log` function, so nothing else in the code
// knows pino is here. The line shape stays {"level":"info","time":"<ISO>","msg":...,
// <fields in the caller's order>}: test/support/server-process.ts reads the port from
// `"msg":"listening","port":N`, which is why the message travels inside the object
// (pino keeps an object's own key order) rather than as pino's separate message argument.
// A flat event (text, numbers and booleans, no field a redaction path starts at: the
// access line of every answer, most others) is rendered here in that same shape, at a
// third of pino's cost; pino renders the rest (nested objects, redaction).
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
 *
 * The waiting lines are kept as bytes (sonic-boom's buffer mode), each encoded once as
 * it is logged: kept as text, every new line made sonic-boom measure the whole text
 * waiting (re-encoding it), which under a flood of refusals cost more than the line
 * itself. The time is rendered once per millisecond, not once per line.
 */
export function createLogger(level: LogLevel, dest?: DestinationStream | ((line: string) => void)): Log {
  const stream: DestinationStream =
    typeof dest === "function" ? { write: (s: string) => dest(s.endsWith("\n") ? s.slice(0, -1) : s) } : dest ?? stdoutAsBytes();
  const options = {
    level,
    // No pid/hostname on every line: the process supervisor already knows them.
    base: undefined,
    timestamp: isoTimeEachMs,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const redacting = pino({ ...options, redact: { paths: [...REDACT_PATHS], censor: "[redacted]" } }, stream);
  // Redaction walks its paths on every line; in the refusal flood's CPU profile that was
  // a tenth of the time. A line with none of the paths' first fields and no
  // nested object (the access line, most others) has nothing to censor.
  const plain = pino(options, stream);
  const threshold = level === "silent" ? Infinity : pino.levels.values[level]!;
  return (event) => {
    const wanted = event.level;
    const lvl = typeof wanted === "string" && LEVELS.has(wanted) ? (wanted as Level) : "info";
    if (pino.levels.values[lvl]! < threshold) return;
    const line = flatLine(lvl, event);
    if (line !== undefined) return void stream.write(line);
    const { level: _, ...rest } = event;
    (mayHoldRedactedPath(rest) ? redacting : plain)[lvl](rest);
  };
}

/** `,"name":` for each field name seen (the names are in the code; the cap is for a caller that spreads input). */
const FIELD_PREFIX = new Map<string, string>();
const FIELD_PREFIXES_KEPT = 1000;

/**
 * pino's line for a flat event (its level, the time, then the fields in order, numbers
 * that are not finite as null, undefined left out), or undefined when the event holds
 * anything else or a field a redaction path starts at: pino renders those.
 */
function flatLine(level: Level, event: Record<string, unknown>): string | undefined {
  let line = `{"level":"${level}"${isoTimeEachMs()}`;
  for (const name in event) {
    if (name === "level") continue;
    const v = event[name];
    let text: string;
    switch (typeof v) {
      case "string":
        text = JSON.stringify(v);
        break;
      case "number":
        text = Number.isFinite(v) ? String(v) : "null";
        break;
      case "boolean":
        text = v ? "true" : "false";
        break;
      case "undefined":
        continue;
      default:
        if (v !== null) return undefined;
        text = "null";
    }
    if (REDACT_ROOTS.has(name)) return undefined;
    let prefix = FIELD_PREFIX.get(name);
    if (prefix === undefined) {
      if (FIELD_PREFIX.size >= FIELD_PREFIXES_KEPT) FIELD_PREFIX.clear();
      FIELD_PREFIX.set(name, (prefix = `,${JSON.stringify(name)}:`));
    }
    line += prefix + text;
  }
  return line + "}\n";
}

/** Stdout through sonic-boom in buffer mode (see above); pino's exit hook flushes it. */
function stdoutAsBytes(): DestinationStream {
  const bytes = pino.destination({ dest: 1, sync: false, contentMode: "buffer" } as Parameters<typeof pino.destination>[0]) as unknown as {
    write(b: Uint8Array): boolean;
  };
  return { write: (line: string) => void bytes.write(Buffer.from(line)) };
}

let renderedAt = NaN;
let rendered = "";
/** pino's `,"time":"<ISO>"`, rendered again only when the millisecond changes. */
function isoTimeEachMs(): string {
  const t = Date.now();
  if (t !== renderedAt) {
    renderedAt = t;
    rendered = `,"time":"${new Date(t).toISOString()}"`;
  }
  return rendered;
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
