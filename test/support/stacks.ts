// The two store set-ups the money suites run on: the embedded default (PGlite and the
// in-process limiter) and the real servers (Postgres and Redis, when
// DATABASE_URL and REDIS_URL are set). The real stack is isolated per suite: a
// throwaway database next to the one in DATABASE_URL (product status and other
// global rows stay private to the suite) and a Redis database number of its own (the
// "global" concurrency permit set is shared by every gateway on one Redis, so tests
// of other areas running at the same time must not see this suite's permits).
import { createScratchDatabase } from "../db/harness.ts";
import { freshDataDir } from "./pglite-template.ts";

export interface Stack {
  name: "embedded" | "postgres+redis";
  /** Which Limiter implementation the gateway gets. */
  limiter: "memory" | "redis";
  /** A reason to skip, or false. */
  skip: string | false;
}

const realSkip = !process.env.DATABASE_URL
  ? "DATABASE_URL is not set"
  : !process.env.REDIS_URL
    ? "REDIS_URL is not set"
    : false;

export const EMBEDDED: Stack = { name: "embedded", limiter: "memory", skip: false };
export const REAL: Stack = { name: "postgres+redis", limiter: "redis", skip: realSkip };
export const STACKS: readonly Stack[] = [EMBEDDED, REAL];

/** REDIS_URL pointing at database number `db` (0..15 on a default Redis). */
export function redisUrlWithDb(db: number): string {
  const u = new URL(process.env.REDIS_URL!);
  u.pathname = `/${db}`;
  return u.toString();
}

export interface OpenedStack {
  stack: Stack;
  /** Passed to makeHarness as `embedded`. */
  embedded: boolean;
  /** Environment for makeHarness or a server process (DATABASE_URL and REDIS_URL, or DATA_DIR). */
  env: Record<string, string>;
  /** Embedded with a data directory: where its PGlite lives (DATA_DIR/pglite). */
  pgliteDir?: string;
  close(): Promise<void>;
}

/**
 * Stores for one suite. `redisDb` should differ between suites that may leave live
 * leases behind (a killed process keeps its permits until the lease runs out).
 * Embedded: `dataDir` gives a migrated DATA_DIR for server processes; in-process
 * harnesses need none (they use an in-memory PGlite).
 */
export async function openStack(stack: Stack, redisDb: number, o: { dataDir?: boolean } = {}): Promise<OpenedStack> {
  if (stack.limiter === "memory") {
    if (!o.dataDir) return { stack, embedded: true, env: {}, close: async () => {} };
    const data = await freshDataDir();
    return { stack, embedded: true, env: { DATA_DIR: data.dataDir }, pgliteDir: data.pgliteDir, close: data.remove };
  }
  const scratch = await createScratchDatabase();
  return {
    stack,
    embedded: false,
    env: { DATABASE_URL: scratch.url, REDIS_URL: redisUrlWithDb(redisDb) },
    close: () => scratch.drop(),
  };
}
