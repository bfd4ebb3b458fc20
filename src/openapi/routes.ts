// GET /openapi.json and GET /docs/api, built from the same registry that
// `npm run build:docs` writes to docs/. Built on the first request and kept by this
// app: tests build many apps that never ask for the description.
import type { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { buildOpenApiDocument, serialiseDocument } from "./document.ts";
import { REFERENCE_CSP, renderReferencePage } from "./reference-page.tsx";

export const OPENAPI_PATH = "/openapi.json";
export const REFERENCE_PATH = "/docs/api";

export function registerOpenApiRoutes(app: Hono<AppEnv>): void {
  let built: { json: string; html: string } | undefined;
  const get = () => {
    if (!built) {
      const doc = buildOpenApiDocument();
      built = { json: serialiseDocument(doc), html: renderReferencePage(doc) };
    }
    return built;
  };
  app.get(OPENAPI_PATH, (c) => c.body(get().json, 200, { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=300" }));
  app.get(REFERENCE_PATH, (c) => c.html(get().html, 200, { "cache-control": "public, max-age=300", "content-security-policy": REFERENCE_CSP }));
}
