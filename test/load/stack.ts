// The system under load: one real server process (node src/main.ts) on a throwaway
// Postgres database and a Redis database number of its own, so the run sees only its
// own rows and permits and never touches the shared servers' global state. Customers
// are created through the operator API, as an operator would.
import { Redis } from "ioredis";
import { openDb, type Db } from "../../src/db/index.ts";
import { adminClient, startServer, type Admin, type ServerProcess, type StartOptions } from "../support/server-process.ts";
import { openStack, REAL, redisUrlWithDb, type OpenedStack } from "../support/stacks.ts";

/** Redis database numbers no other suite uses (test/money uses 10, 11, 13, 14, 15). */
export const LOAD_REDIS_DB = 12;
export const SOAK_REDIS_DB = 9;

export interface Customer {
  orgId: string;
  appId: string;
  liveKey: string;
  testKey: string;
}

export interface LoadStack {
  server: ServerProcess;
  url: string;
  admin: Admin;
  /** The run's own database, for the money checks. */
  db: Db;
  /** The run's own Redis database, for the permit checks. */
  redis: Redis;
  env: Record<string, string>;
  close(): Promise<void>;
}

export const storesSkip = !process.env.DATABASE_URL
  ? "DATABASE_URL is not set"
  : !process.env.REDIS_URL
    ? "REDIS_URL is not set"
    : false;

export async function startLoadStack(serverEnv: Record<string, string>, redisDb = LOAD_REDIS_DB, command?: StartOptions["command"]): Promise<LoadStack> {
  const opened: OpenedStack = await openStack(REAL, redisDb);
  const redis = new Redis(redisUrlWithDb(redisDb), { lazyConnect: false, maxRetriesPerRequest: 1 });
  let server: ServerProcess | undefined;
  let db: Db | undefined;
  try {
    server = await startServer({ ...opened.env, ...serverEnv }, { timeoutMs: 300_000, command });
    db = await openDb({ databaseUrl: opened.env.DATABASE_URL, dataDir: "", max: 2 });
  } catch (err) {
    await server?.kill("SIGKILL");
    redis.disconnect();
    await opened.close();
    throw err;
  }
  const s = server;
  const d = db;
  return {
    server: s,
    url: s.url,
    admin: adminClient(s.url),
    db: d,
    redis,
    env: { ...opened.env, ...serverEnv },
    async close() {
      await s.kill("SIGTERM");
      await d.close();
      redis.disconnect();
      await opened.close();
    },
  };
}

async function must(r: Promise<{ status: number; json: Record<string, any> }>, want: number): Promise<Record<string, any>> {
  const got = await r;
  if (got.status !== want) throw new Error(`operator API answered ${got.status}: ${JSON.stringify(got.json)}`);
  return got.json;
}

/**
 * `n` organizations, each verified, funded with `creditKrw`, its daily limit at the
 * maximum (1,000,000 KRW, so a long run is not cut short by the 50,000 default), one
 * app with the product enabled and both keys. Created a few at a time.
 */
export async function createCustomers(admin: Admin, n: number, creditKrw: number): Promise<Customer[]> {
  const one = async (): Promise<Customer> => {
    const org = await must(admin("POST", "/orgs", { email: `load-${crypto.randomUUID()}@example.com` }), 201);
    const orgId = org.orgId as string;
    await must(admin("POST", `/orgs/${orgId}/credit`, { amountKrw: creditKrw }), 200);
    await must(admin("PATCH", `/orgs/${orgId}`, { dailyLimitKrw: 1_000_000 }), 200);
    const app = await must(admin("POST", `/orgs/${orgId}/apps`, { name: "load", productEnabled: true }), 201);
    const appId = app.appId as string;
    const live = await must(admin("POST", `/apps/${appId}/keys`, { kind: "live" }), 201);
    const test = await must(admin("POST", `/apps/${appId}/keys`, { kind: "test" }), 201);
    return { orgId, appId, liveKey: live.key as string, testKey: test.key as string };
  };
  const out: Customer[] = [];
  for (let i = 0; i < n; i += 8) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(8, n - i) }, one))));
  }
  return out;
}
