// Db over node-postgres (pg): a connection pool, `$1` parameters, one checked-out
// client per transaction.
//
// Why pg and not postgres.js: the fault suite (test/faults) restarts PostgreSQL under
// load, and postgres.js 3.4.9 (the newest) then crashed the whole process with an
// uncatchable "Cannot read properties of null (reading 'write')" from a deferred write
// on a closed socket (porsager/postgres#1154, #1208, unfixed upstream); connections
// that survived could also stay wedged with a stale write timer. pg reports the same
// events as rejected queries and 'error' events we can handle.
//
// Store outages must surface as errors the service recognises (isDbUnavailable in
// src/db/errors.ts classifies by `.code`): pg's own "connection ended" errors carry no code, so they are
// re-thrown as DbUnavailableError with the SQLSTATE class 08 code.
import pg from "pg";
import type { Db, QueryOptions } from "./types.ts";
import { OID_INT8, OID_NUMERIC, OID_TIMESTAMPTZ, parseInt8, parseNumeric, parseTimestamptz } from "./values.ts";

/** A lost or unobtainable database connection (code 08006, connection_failure). */
export class DbUnavailableError extends Error {
  override readonly name = "DbUnavailableError";
  readonly code = "08006";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// pg's messages for a connection that is gone, never came, or stopped answering
// (query_timeout); they have no `.code`.
const CONNECTION_LOST =
  /connection terminated|connection error|not queryable|timeout exceeded when trying to connect|timeout expired|query read timeout|client was closed|cannot use a pool after calling end/i;

// A frozen (SIGSTOPped) or partitioned server accepts TCP connections (the kernel
// does) and then never answers; without bounds every query would wait forever.
// Three bounds, so a request gets 503 + Retry-After within seconds and the pool
// recovers by itself when the server answers again (docs/RELIABILITY.md):
/** Server side: a statement running longer is cancelled (57014) and its connection stays usable. */
export const STATEMENT_TIMEOUT_MS = 5_000;
/** Client side: no answer at all by then (the server is not running): the connection is dropped. Later than the server's own bound, which says more when the server is alive. */
export const QUERY_TIMEOUT_MS = 6_000;
/** A new connection's handshake. Separate from the wait for a free pooled connection (below). */
export const CONNECT_TIMEOUT_MS = 5_000;
/** The wait for a free pooled connection (and pg-pool's own connect bound). */
export const POOL_WAIT_TIMEOUT_MS = 30_000;

/**
 * pg.Client with its own connect bound: pg-pool hands its options to each client, and
 * its connectionTimeoutMillis must stay long because it also bounds the wait for a
 * free connection, which under a burst is legitimately seconds (docs/DECISIONS.md, "Postgres pool").
 */
function boundedClient(connectTimeoutMs: number): typeof pg.Client {
  return class BoundedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  };
}

function storeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") return err; // SQLSTATE or a socket errno: already classified
  if (CONNECTION_LOST.test(err.message)) return new DbUnavailableError(`database unavailable: ${err.message}`, { cause: err });
  return err;
}

// Our parsers for the types whose default reading differs between drivers (values.ts);
// everything else uses pg's defaults. Per pool, not pg.types.setTypeParser (process-wide).
const PARSERS: Record<number, (text: string) => unknown> = {
  [OID_INT8]: parseInt8,
  [OID_NUMERIC]: parseNumeric,
  [OID_TIMESTAMPTZ]: parseTimestamptz,
};
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    const ours = format === "binary" ? undefined : PARSERS[oid];
    return ours ?? (pg.types.getTypeParser as (oid: number, format?: string) => (v: string) => unknown)(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PostgresOptions {
  /** Errors of idle pooled connections (the server went away); the pool drops them itself. */
  onError?: (err: Error) => void;
  /** application_name of the connections (default "pixeldrop"); a test tells its own apart by it. */
  applicationName?: string;
  /** Shorter bounds than the defaults above (tests of the guard below). */
  bounds?: { queryTimeoutMs?: number; connectTimeoutMs?: number };
}

export function openPostgres(url: string, max = 10, o: PostgresOptions = {}): Db {
  const queryTimeoutMs = o.bounds?.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  const connectTimeoutMs = o.bounds?.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const applicationName = o.applicationName ?? "pixeldrop";
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types,
    // UTC sessions keep timestamptz text unambiguous for the parser above.
    options: "-c TimeZone=UTC",
    application_name: applicationName,
    // The wait for a free pooled connection, which under a burst of hundreds of requests
    // on 10 connections is legitimately seconds long: 30 s, not less. A new
    // connection's handshake has its own shorter bound (BoundedClient).
    connectionTimeoutMillis: POOL_WAIT_TIMEOUT_MS,
    Client: boundedClient(connectTimeoutMs),
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: queryTimeoutMs,
    // A partitioned server is noticed by TCP keepalive even on an idle connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // Without a listener an idle connection's error (server restarted) would crash the process.
  pool.on("error", (err) => o.onError?.(err));
  // Every client carries an 'error' listener for its whole life, attached when it
  // connects and before any caller gets it. pg-pool removes its own idle listener
  // before `pool.connect()` resolves, so a listener added by the caller after the
  // await comes too late for a fatal error arriving with the ready message (57P01 from
  // pg_terminate_backend or a restart): with no listener it would crash the process.
  // The statement that was running is rejected anyway; the event needs only a listener.
  pool.on("connect", (client) => {
    client.on("error", ignoreClientError);
  });
  const probe = () => probeServer(url, applicationName);
  return wrapPool(pool, unansweredGuard(probe, queryTimeoutMs));
}

/**
 * After a statement or a new connection got no answer at all (the query or handshake
 * bound fired), the server is taken as not answering: the calls still waiting (for a
 * pooled connection or for their answer) fail at once, and new calls fail at once for
 * this long. Against a frozen server each queued call would otherwise wait for a
 * connection (up to POOL_WAIT_TIMEOUT_MS, ten handshake timeouts at a time) and then
 * for its own timeout: measured 21–25 s for a burst of 40, instead of the bounds above.
 * After the pause calls go through again, so the service finds out by itself when the
 * server answers. A call cut short this way has an unknown outcome, like a timed-out
 * one (captures are asked again, src/gateway/capture.ts).
 *
 * A client-side bound also fires when our own event loop was held up (a CPU-starved
 * host: the answer sits unread in the socket while the timer, which runs first, fires
 * late). Cutting every waiting call then turns our own slowness into an outage (seen:
 * ~150 calls answered 503 under load 15–28 on 2 cores, for one late timer). So when
 * our own timer (a tick every LOOP_TICK_MS) fired more than LOOP_LATE_MS late within
 * the last query bound, the server is asked first, on a connection of its own bounded
 * by PROBE_TIMEOUT_MS: the waiting calls are cut only if it does not answer. With a
 * punctual loop a timeout is the server's, and the cut comes at once as before.
 */
export const UNANSWERED_PAUSE_MS = 2_000;
/** How late our own timer may fire before a timeout is taken as possibly ours. */
export const LOOP_LATE_MS = 1_000;
const LOOP_TICK_MS = 250;
/** The probe's bound: a new connection and SELECT 1. */
export const PROBE_TIMEOUT_MS = 2_000;
const UNANSWERED = /query read timeout|timeout expired|connection timeout/i;

interface UnansweredGuard {
  /** Throws while the pause runs. */
  check(): void;
  /** Starts the pause (and cuts the waiting calls) when `err` says the server did not answer. */
  note(err: unknown): void;
  /** `p`, or a store error as soon as a pause starts while it is pending. */
  race<T>(p: Promise<T>): Promise<T>;
  /** Stops the loop-lateness timer. */
  close(): void;
}

function unansweredGuard(probe: () => Promise<void>, queryTimeoutMs: number): UnansweredGuard {
  let until = 0;
  const waiting = new Set<(err: Error) => void>();
  const notAnswering = () => new DbUnavailableError("database unavailable: not answering (a statement or connection just timed out)");

  // How late our own timer fires: `lateUntil` keeps a late tick in mind for one query
  // bound, the time a statement sent before the stall may still time out in.
  let lastTick = performance.now();
  let lateUntil = 0;
  const ticker = setInterval(() => {
    const t = performance.now();
    if (t - lastTick - LOOP_TICK_MS > LOOP_LATE_MS) lateUntil = t + queryTimeoutMs;
    lastTick = t;
  }, LOOP_TICK_MS);
  (ticker as { unref?: () => void }).unref?.();
  // A timeout's own callback may run before the tick that would have seen the stall.
  const loopWasLate = () => {
    const t = performance.now();
    return t < lateUntil || t - lastTick - LOOP_TICK_MS > LOOP_LATE_MS;
  };

  let probing: Promise<void> | undefined;
  let answeredAt = -Infinity;
  const stop = () => {
    until = Date.now() + UNANSWERED_PAUSE_MS;
    for (const cut of [...waiting]) cut(notAnswering());
  };

  const guard: UnansweredGuard = {
    check() {
      if (Date.now() < until) throw notAnswering();
    },
    note(err) {
      const text = err instanceof Error ? `${err.message} ${(err.cause as Error | undefined)?.message ?? ""}` : "";
      if (!UNANSWERED.test(text)) return;
      if (!loopWasLate()) return stop();
      // Possibly ours: the server was just heard, or is asked now (once at a time).
      if (performance.now() - answeredAt < PROBE_TIMEOUT_MS) return;
      probing ??= probe().then(
        () => {
          answeredAt = performance.now();
        },
        () => stop(),
      ).finally(() => {
        probing = undefined;
      });
    },
    async race(p) {
      let cut!: (err: Error) => void;
      const cutShort = new Promise<never>((_, reject) => (cut = reject));
      waiting.add(cut);
      // The call goes on in the driver even when cut short; its own timeout, when it
      // comes, still says the server is not answering (and cuts whoever waits then).
      p.catch((err: unknown) => guard.note(err));
      try {
        return await Promise.race([p, cutShort]);
      } finally {
        waiting.delete(cut);
      }
    },
    close() {
      clearInterval(ticker);
    },
  };
  return guard;
}

/**
 * Whether the server answers, on a connection outside the pool: resolves when SELECT 1
 * was answered within PROBE_TIMEOUT_MS, rejects otherwise. When the bound fires, the
 * socket's pending input is read first (setImmediate runs after the I/O poll), so a
 * late loop does not fail the probe the way it failed the call.
 */
async function probeServer(url: string, applicationName: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: applicationName, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
  client.on("error", ignoreClientError);
  let answered = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const asked = (async () => {
    await client.connect();
    await client.query("SELECT 1");
    answered = true;
  })();
  asked.catch(() => {});
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(() => setImmediate(resolve), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([asked, bound]);
  } finally {
    clearTimeout(timer);
    void client.end().catch(() => {});
  }
  if (!answered) throw new DbUnavailableError("database unavailable: the probe got no answer");
}

/** The listener every pooled client carries (see openPostgres). */
function ignoreClientError(): void {}

/** One statement on a pool or a checked-out client; driver errors become store errors. */
async function rowsOf<T>(on: pg.Pool | pg.PoolClient, guard: UnansweredGuard, text: string, params: unknown[] = [], o?: QueryOptions): Promise<T[]> {
  guard.check();
  try {
    const running = o?.prepare ? on.query({ name: o.prepare, text, values: params }) : on.query(text, params);
    return (await guard.race(running)).rows as T[];
  } catch (err) {
    guard.note(err);
    throw storeError(err);
  }
}

function wrapPool(pool: pg.Pool, guard: UnansweredGuard): Db {
  let closed = false;
  return {
    kind: "postgres",
    query: (text, params, o) => rowsOf(pool, guard, text, params, o),
    async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      let client: pg.PoolClient;
      let cutOff = false;
      guard.check();
      try {
        const connecting = pool.connect();
        // A client that arrives after the call was cut short goes straight back.
        connecting.then(
          (c) => {
            if (cutOff) c.release();
          },
          () => {},
        );
        client = await guard.race(connecting);
      } catch (err) {
        cutOff = true;
        guard.note(err);
        throw storeError(err);
      }
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const out = await fn(wrapClient(client, guard));
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch((e: unknown) => {
          // The connection is unusable: release(err) below destroys it instead of pooling it.
          broken = e instanceof Error ? e : new Error(String(e));
        });
        throw storeError(err);
      } finally {
        client.release(broken);
      }
    },
    async exec(script: string): Promise<void> {
      // Without parameters pg uses the simple protocol, which accepts several statements.
      try {
        await pool.query(script);
      } catch (err) {
        throw storeError(err);
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      guard.close();
      await pool.end();
    },
  };
}

/** The Db seen inside a transaction: every statement on its one client. */
function wrapClient(client: pg.PoolClient, guard: UnansweredGuard): Db {
  const db: Db = {
    kind: "postgres",
    query: (text, params, o) => rowsOf(client, guard, text, params, o),
    transaction: (fn) => fn(db),
    async exec(script: string): Promise<void> {
      try {
        await client.query(script);
      } catch (err) {
        throw storeError(err);
      }
    },
    async close(): Promise<void> {},
  };
  return db;
}
