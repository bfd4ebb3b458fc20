// Operator routes for keys: issue, reissue (old key valid 7 more days), suspend,
// unsuspend, delete. The key text appears only in the issue/reissue answer.
import type { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env.ts";
import { pathId } from "../http/path-id.ts";
import type { KeyRecord } from "../keys/index.ts";
import { jsonBody } from "./json-body.ts";
import { found, unwrap, type AdminDeps } from "./deps.ts";

export const IssueKey = z.object({ kind: z.enum(["test", "live"]) }).strict();

function keyView(k: KeyRecord) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    keyId: k.keyId,
    appId: k.appId,
    kind: k.kind,
    label: k.label,
    createdAt: iso(k.createdAt),
    lastUsedAt: iso(k.lastUsedAt),
    validUntil: iso(k.expiresAt),
    suspended: k.suspendedAt !== null,
    replacedBy: k.replacedBy,
  };
}

export function registerKeyRoutes(app: Hono<AppEnv>, d: AdminDeps): void {
  app.post("/apps/:appId/keys", async (c) => {
    const appId = pathId(c, "appId", "App");
    const body = await jsonBody(c, IssueKey);
    const r = unwrap(await d.keys.issue(appId, body.kind));
    return c.json({ keyId: r.keyId, key: r.key }, 201, { "cache-control": "no-store" });
  });

  app.post("/keys/:keyId/reissue", async (c) => {
    const r = unwrap(await d.keys.reissue(pathId(c, "keyId", "Key")));
    return c.json(
      { keyId: r.keyId, key: r.key, previousValidUntil: new Date(r.previousValidUntil).toISOString() },
      201,
      { "cache-control": "no-store" },
    );
  });

  const change = (path: string, method: "post" | "delete", act: (keyId: string) => Promise<{ ok: true } | import("../http/api-error.ts").Failure>) => {
    app[method](path, async (c) => {
      const keyId = pathId(c, "keyId", "Key");
      unwrap(await act(keyId));
      return c.json(keyView(found(await d.keys.getKey(keyId), "Key")));
    });
  };
  change("/keys/:keyId/suspend", "post", d.keys.suspend);
  change("/keys/:keyId/unsuspend", "post", d.keys.unsuspend);
  change("/keys/:keyId", "delete", d.keys.remove);
}
