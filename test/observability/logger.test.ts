// The pino-backed `Log`: the line shape other code depends on (server-process.ts reads
// the port from it), levels from LOG_LEVEL, and redaction of header-shaped secrets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { createLogger } from "../../src/wiring/logger.ts";

function capture(level: Parameters<typeof createLogger>[0]) {
  const lines: string[] = [];
  return { lines, log: createLogger(level, (l) => lines.push(l)) };
}

test("a line is one JSON object: level label, ISO time, then the caller's fields in order", () => {
  const { lines, log } = capture("info");
  log({ msg: "listening", port: 41234, database: "pglite" });
  assert.equal(lines.length, 1);
  assert.ok(!lines[0]!.includes("\n"));
  // The exact pattern test/support/server-process.ts waits for.
  assert.match(lines[0]!, /"msg":"listening","port":41234/);
  const parsed = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), ["level", "time", "msg", "port", "database"]);
  assert.equal(parsed.level, "info");
  assert.ok(!Number.isNaN(Date.parse(String(parsed.time))));
});

test("the event's level picks the pino level; lines below LOG_LEVEL are dropped", () => {
  const { lines, log } = capture("warn");
  log({ level: "debug", msg: "d" });
  log({ msg: "i" });
  log({ level: "warn", msg: "w" });
  log({ level: "error", msg: "e" });
  assert.deepEqual(
    lines.map((l) => JSON.parse(l) as { level: string; msg: string }).map((l) => `${l.level}:${l.msg}`),
    ["warn:w", "error:e"],
  );
  const silent = capture("silent");
  silent.log({ level: "error", msg: "nothing" });
  assert.equal(silent.lines.length, 0);
  const debug = capture("debug");
  debug.log({ level: "nonsense", msg: "unknown levels log as info" });
  assert.equal((JSON.parse(debug.lines[0]!) as { level: string }).level, "info");
});

test("key-bearing header and field names are censored wherever a caller put them", () => {
  const { lines, log } = capture("debug");
  const secret = "pd_live_Zq81Yx3Kd0fPmN5sW2aLr7Tb";
  log({
    msg: "careless",
    "x-api-key": secret,
    apiKey: secret,
    authorization: `Bearer ${secret}`,
    cookie: `k=${secret}`,
    headers: { "x-api-key": secret, authorization: `Bearer ${secret}`, cookie: secret, "set-cookie": secret, accept: "image/png" },
    req: { headers: { "x-api-key": secret, authorization: secret } },
  });
  const line = lines[0]!;
  assert.ok(!line.includes("Zq81Yx3Kd0fPmN5sW2aLr7Tb"), line);
  const parsed = JSON.parse(line) as { headers: Record<string, string>; req: { headers: Record<string, string> } };
  assert.equal(parsed.headers["x-api-key"], "[redacted]");
  assert.equal(parsed.headers.accept, "image/png", "other fields are left alone");
  assert.equal(parsed.req.headers.authorization, "[redacted]");
  // A flat event (no nested object) holding such a field is censored too.
  log({ msg: "careless, flat", authorization: `Bearer ${secret}`, "x-api-key": secret });
  assert.ok(!lines[1]!.includes("Zq81Yx3Kd0fPmN5sW2aLr7Tb"), lines[1]);
  assert.equal((JSON.parse(lines[1]!) as { authorization: string }).authorization, "[redacted]");
});

test("a flat event is rendered as pino renders it: field order, escapes, numbers that are not finite, null, undefined", () => {
  const { lines, log } = capture("debug");
  const event = {
    level: "warn",
    msg: 'a "quoted"\nline\\ with \u0001 control, ünïcödé and \ud83d\ude00',
    n: 12.5,
    inf: Infinity,
    nan: NaN,
    yes: true,
    no: false,
    nothing: null,
    skipped: undefined,
    last: "",
  };
  log(event);
  const pinoLines: string[] = [];
  const { level: _, ...fields } = event;
  pino({ level: "debug", base: undefined, formatters: { level: (label: string) => ({ level: label }) } }, { write: (s: string) => void pinoLines.push(s.trimEnd()) }).warn(fields);
  const withoutTime = (line: string) => line.replace(/,"time":(?:"[^"]*"|\d+)/, "");
  assert.equal(withoutTime(lines[0]!), withoutTime(pinoLines[0]!));
  assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), ["level", "time", "msg", "n", "inf", "nan", "yes", "no", "nothing", "last"]);
});
