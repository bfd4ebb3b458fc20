// /healthz: the process is up and its event loop turns. /readyz: models warm and
// stores reachable; 503 until then, with the parts that are not ready named, so an
// orchestrator and an on-call engineer see the same thing.
import type { Hono } from "hono";
import type { AppEnv } from "./app-env.ts";

export type ReadinessCheck = () => Promise<{ ok: boolean; detail?: Record<string, unknown> }>;

export function registerHealth(app: Hono<AppEnv>, checks: Record<string, ReadinessCheck>): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const results: Record<string, { ok: boolean } & Record<string, unknown>> = {};
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          const r = await withTimeout(check(), 2000);
          results[name] = { ok: r.ok, ...r.detail };
        } catch (err) {
          results[name] = { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    const ready = Object.values(results).every((r) => r.ok);
    return c.json({ status: ready ? "ready" : "not_ready", checks: results }, ready ? 200 : 503);
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}
