// The client in a real browser: src/client bundled as it is (esbuild, browser platform,
// so a Node built-in would fail the build), loaded by Debian's Chromium driven by
// playwright-core, calling the real service. The page and the API share one origin
// (a small server serves the page and passes /v1.0/removebg on), as a site's own
// backend would. Skips when /usr/bin/chromium is absent (.ci/run installs it).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REQUEST_ID, startService, TINY_PNG, type Service } from "./setup.ts";

const CHROMIUM = "/usr/bin/chromium";
const skip = !existsSync(CHROMIUM) && "no /usr/bin/chromium";

let svc: Service | undefined;
let site: { url: string; server: Server } | undefined;

async function bundleClient(): Promise<string> {
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: [fileURLToPath(new URL("../../src/client/index.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return out.outputFiles[0]!.text;
}

/** Serves the page and the bundle, and passes removebg calls on to the service. */
async function startSite(target: string, bundle: string): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>client</title>");
    } else if (req.method === "GET" && req.url === "/client.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(bundle);
    } else if (req.method === "POST" && req.url === "/v1.0/removebg") {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers: Record<string, string> = {};
      for (const n of ["content-type", "x-api-key"]) if (typeof req.headers[n] === "string") headers[n] = req.headers[n] as string;
      const up = await fetch(`${target}/v1.0/removebg`, { method: "POST", headers, body: Buffer.concat(chunks) });
      const back: Record<string, string> = {};
      up.headers.forEach((v, k) => {
        if (k.startsWith("x-") || k === "content-type" || k === "retry-after") back[k] = v;
      });
      res.writeHead(up.status, back).end(Buffer.from(await up.arrayBuffer()));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

before(async () => {
  if (skip) return;
  svc = await startService();
  site = await startSite(svc.url, await bundleClient());
});
after(async () => {
  if (site) await new Promise<void>((resolve) => site!.server.close(() => resolve()));
  await svc?.close();
});

test("the bundled client works in Chromium: a cut-out with its headers, and a typed error", { skip, timeout: 120_000 }, async () => {
  const { chromium } = await import("playwright-core");
  const profile = await mkdtemp(join(tmpdir(), "pixeldrop-client-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${site!.url}/`);
    const run = (apiKey: string) =>
      page.evaluate(
        async ({ apiKey, image }) => {
          const { createClient, PixeldropError } = await import(`${location.origin}/client.js`);
          const client = createClient({ apiKey, baseUrl: location.origin, maxResends: 0 });
          try {
            const r = await client.removeBackground(new Blob([new Uint8Array(image)], { type: "image/png" }), { size: "preview" });
            return { ok: true, signature: [...r.bytes.subarray(0, 4)], chargedKrw: r.chargedKrw, width: r.width, height: r.height, requestId: r.requestId };
          } catch (err) {
            if (!(err instanceof PixeldropError)) return { ok: false, other: String(err) };
            const e = err as InstanceType<typeof PixeldropError>;
            return { ok: false, status: e.status, code: e.code, requestId: e.requestId, attempts: e.attempts };
          }
        },
        { apiKey, image: [...TINY_PNG] },
      );
    const ok = await run(svc!.customer.liveKey);
    assert.deepEqual([ok.ok, ok.signature, ok.chargedKrw, ok.width, ok.height], [true, [0x89, 0x50, 0x4e, 0x47], 22, 64, 48], JSON.stringify(ok));
    assert.match(String(ok.requestId), REQUEST_ID);
    const bad = await run("pd_live_notakey000000000000000000000");
    assert.deepEqual([bad.ok, bad.status, bad.code, bad.attempts], [false, 401, "invalid_api_key", 1], JSON.stringify(bad));
    assert.match(String(bad.requestId), REQUEST_ID);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
});
