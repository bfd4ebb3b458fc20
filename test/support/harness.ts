// A whole Pixeldrop app for HTTP tests through app.request(): real stores (in-memory
// PGlite, or Postgres/Redis when DATABASE_URL/REDIS_URL are set), real imaging, and the
// stub model (a centred ellipse) run inline, so tests are fast and deterministic.
import { readFileSync } from "node:fs";
import { parseConfig } from "../../src/config.ts";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { createInlineEngine } from "../../src/engine/pipeline/inline-engine.ts";
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import { buildApp, type AppOptions } from "../../src/wiring/app.ts";
import { createServices, type Services } from "../../src/wiring/services.ts";
import { openMigratedPglite } from "../db/harness.ts";
import type { Db } from "../../src/db/index.ts";

export const OPERATOR_TOKEN = "test-operator-token-0123456789-abcdefgh";
export const FIXTURES = new URL("../fixtures/", import.meta.url);
export const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, FIXTURES)));

export interface HarnessOptions {
  env?: Record<string, string>;
  now?: () => number;
  sleep?: AppOptions["sleep"];
  product?: AppOptions["product"];
  /** Use the real stores named by DATABASE_URL / REDIS_URL (default: whatever is set). */
  embedded?: boolean;
  /** "from-config": the service builds its engine from the environment (MODEL, MODEL_CARD, INFERENCE_BACKEND), as in production. */
  engine?: Engine | null | "from-config";
  logLines?: string[];
  /** A database handle of the test's own (it keeps the unwatched handle the services wrap). */
  db?: Db;
}

export type Harness = Awaited<ReturnType<typeof makeHarness>>;

export async function makeHarness(o: HarnessOptions = {}) {
  const env: Record<string, string | undefined> = {
    DATA_DIR: "memory://",
    INFERENCE_BACKEND: "stub",
    STUB_DELAY_MS: "0",
    LOG_LEVEL: "debug",
    ...(o.embedded ? {} : { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL }),
    ...o.env,
  };
  const config = parseConfig(env);
  const lines = o.logLines ?? [];
  const log = (e: Record<string, unknown>) => lines.push(JSON.stringify(e));
  const engine =
    o.engine === "from-config"
      ? undefined
      : o.engine !== undefined
      ? o.engine
      : createInlineEngine(
          await createMaskSession({
            model: { inputSize: [1024, 1024] } as never,
            modelPath: "",
            backend: "stub",
            threads: 1,
            wasmDir: "",
            stubDelayMs: 0,
          }),
        );
  // Embedded runs start from a migrated PGlite template: initdb in WASM costs seconds.
  const db = o.db ?? (config.DATABASE_URL ? undefined : await openMigratedPglite());
  const services: Services = await createServices(config, { log, engine, now: o.now, db }).catch(async (err: unknown) => {
    // A start that fails (a model the config cannot use) leaves the database open: close it, so the test process can end.
    if (!o.db) await db?.close().catch(() => {});
    throw err;
  });
  let shuttingDown = false;
  const { app, mailSent } = buildApp(services, {
    operatorToken: OPERATOR_TOKEN,
    log,
    isShuttingDown: () => shuttingDown,
    sleep: o.sleep,
    product: o.product,
    remoteAddress: () => "127.0.0.1",
  });

  async function admin(method: string, path: string, body?: unknown) {
    const res = await app.request(`/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    return { status: res.status, json, res };
  }

  /** A verified org with credit, an app with the product enabled, and its keys. */
  async function customer(opts: { creditKrw?: number; productEnabled?: boolean; live?: boolean } = {}) {
    const email = `u${crypto.randomUUID()}@example.com`;
    const org = await admin("POST", "/orgs", { email });
    if (org.status !== 201) throw new Error(`org: ${JSON.stringify(org.json)}`);
    const orgId = org.json.orgId as string;
    if (opts.creditKrw) await admin("POST", `/orgs/${orgId}/credit`, { amountKrw: opts.creditKrw });
    const app = await admin("POST", `/orgs/${orgId}/apps`, { name: "test app", productEnabled: opts.productEnabled ?? true });
    const appId = app.json.appId as string;
    const test = await admin("POST", `/apps/${appId}/keys`, { kind: "test" });
    const live = opts.live === false ? undefined : await admin("POST", `/apps/${appId}/keys`, { kind: "live" });
    return {
      orgId,
      appId,
      testKey: test.json.key as string,
      testKeyId: test.json.keyId as string,
      liveKey: live?.json.key as string,
      liveKeyId: live?.json.keyId as string,
    };
  }

  /** POST /v1.0/removebg with a multipart form. */
  function removebg(
    key: string | undefined,
    fields: Record<string, string | Uint8Array> = {},
    init: { headers?: Record<string, string>; query?: string; ip?: string } = {},
  ) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) {
      if (typeof v === "string") form.append(k, v);
      else form.append(k, new Blob([v as Uint8Array<ArrayBuffer>]), `${k}.bin`);
    }
    const headers: Record<string, string> = { ...init.headers };
    if (key !== undefined) headers["x-api-key"] = key;
    if (init.ip) headers["x-forwarded-for"] = init.ip;
    return app.request(`/v1.0/removebg${init.query ?? ""}`, { method: "POST", body: form, headers });
  }

  return {
    app,
    services,
    config,
    admin,
    customer,
    removebg,
    logLines: lines,
    /** Resolves once the console's sign-up and sign-in mails asked for so far are written (they go out after the answer). */
    mailSent,
    setShuttingDown: (v: boolean) => (shuttingDown = v),
    close: async () => {
      await mailSent();
      await services.close();
    },
  };
}

export async function errorOf(res: Response): Promise<{ code: string; title: string }> {
  const body = (await res.json()) as { errors: { code: string; title: string }[] };
  return body.errors[0];
}
