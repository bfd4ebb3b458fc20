// Drop-in for clients of the mirrored API (DECISIONS.md "Responses"): `Accept:
// application/json` is answered as {"data":{"result_b64","foreground_*"}} with the same
// headers, and a real npm client of that API works against a local server.
//
// The client library: `remove.bg` 1.3.0 (npm). Neither it nor the other client on npm
// (removebg-wrapper) lets the caller change the base address: both hard-code the
// mirrored API's URL. So the test loads the library's own code with exactly one change,
// the base address (in memory; nothing on disk is patched), and runs it over a real
// socket against the app served by @hono/node-server on a loopback port.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { serve, type RunningServer } from "../../src/wiring/serve.ts";
import { FIXTURES } from "../support/harness.ts";
import { expectError, gatewayHarness, TINY_PNG, TINY_W, TINY_H, type GatewayHarness } from "./helpers.ts";
import { NO_PROXY } from "../../src/http/proxy-trust.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

interface JsonAnswer {
  data: {
    result_b64: string;
    foreground_top: number;
    foreground_left: number;
    foreground_width: number;
    foreground_height: number;
  };
}

/** Width and height from a PNG's IHDR chunk (bytes 16..23). */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "PNG signature");
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

describe("Accept: application/json", () => {
  test("answers the mirrored JSON form with the same headers", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, { headers: { accept: "application/json" } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const body = (await res.json()) as JsonAnswer;
    assert.deepEqual(Object.keys(body), ["data"]);
    const png = Uint8Array.from(Buffer.from(body.data.result_b64, "base64"));
    assert.deepEqual(pngSize(png), { width: TINY_W, height: TINY_H });
    assert.equal(res.headers.get("x-width"), String(TINY_W));
    assert.equal(res.headers.get("x-height"), String(TINY_H));
    assert.equal(res.headers.get("x-pd-charged-krw"), "22");
    assert.equal(res.headers.get("x-pd-balance-krw"), "978");
    assert.match(res.headers.get("x-processing-ms") ?? "", /^\d+$/);
    const d = body.data;
    for (const k of ["foreground_top", "foreground_left", "foreground_width", "foreground_height"] as const) {
      assert.ok(Number.isInteger(d[k]) && d[k] >= 0, `${k} = ${d[k]}`);
    }
    assert.equal(d.foreground_top, Number(res.headers.get("x-foreground-top")));
    assert.equal(d.foreground_left, Number(res.headers.get("x-foreground-left")));
    assert.equal(d.foreground_width, Number(res.headers.get("x-foreground-width")));
    assert.equal(d.foreground_height, Number(res.headers.get("x-foreground-height")));
    assert.ok(d.foreground_left + d.foreground_width <= TINY_W && d.foreground_top + d.foreground_height <= TINY_H);
    // The stub model keeps a centred ellipse: some foreground, not the whole frame.
    assert.ok(d.foreground_width > 0 && d.foreground_width < TINY_W);
  });

  test("test keys get the JSON form with their headers", async () => {
    const c = await g.h.customer({ live: false });
    const res = await g.removebg(c.testKey, { image_file: TINY_PNG }, { headers: { accept: "application/json" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-pd-test-size"), "preview");
    assert.equal(res.headers.get("x-pd-test-remaining"), "49");
    assert.equal(res.headers.get("x-pd-charged-krw"), null);
    const body = (await res.json()) as JsonAnswer;
    assert.ok(body.data.result_b64.length > 0);
  });

  test("any other Accept gets the PNG; errors keep the error envelope", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    for (const accept of ["image/png", "*/*", "image/*, application/json"]) {
      const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, { headers: { accept } });
      assert.equal(res.headers.get("content-type"), "image/png", accept);
      pngSize(new Uint8Array(await res.arrayBuffer()));
    }
    const bad = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "hd" }, { headers: { accept: "application/json" } });
    await expectError(bad, 400, "unsupported_parameter");
  });
});

// ---- The real client library ------------------------------------------------------

type RemoveBgLib = {
  removeBackgroundFromImageFile(o: { path: string; apiKey: string; size?: string; type?: string; channels?: string; bg_color?: string }): Promise<{
    base64img: string;
    resultWidth: string;
    resultHeight: string;
    rateLimit: string;
    rateLimitRemaining: string;
    rateLimitReset: string;
  }>;
};

const require = createRequire(import.meta.url);
const libPath = (() => {
  try {
    return require.resolve("remove.bg");
  } catch {
    return undefined;
  }
})();

/** The library's own dist/index.js with only its base address replaced. */
function loadClientWithBaseAddress(baseUrl: string): RemoveBgLib {
  const source = readFileSync(libPath!, "utf8");
  const original = "https://api.remove.bg";
  assert.equal(source.split(original).length, 2, "the library names its base address exactly once");
  const changed = source.replace(original, baseUrl);
  const module = { exports: {} as Record<string, unknown> };
  const wrapper = vm.runInThisContext(`(function (exports, require, module, __filename, __dirname) {${changed}\n})`, {
    filename: libPath,
  }) as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(libPath!), module, libPath, dirname(libPath!));
  return module.exports as unknown as RemoveBgLib;
}

describe("an existing client library of the mirrored API (npm remove.bg)", { skip: libPath ? false : "remove.bg is not installed" }, () => {
  let server: RunningServer;
  let client: RemoveBgLib;
  before(async () => {
    // Its own limiter: over a real socket every call comes from 127.0.0.1.
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }), config: { TRUST_PROXY: NO_PROXY } });
    server = await serve(v.app.fetch, { port: 0, hostname: "127.0.0.1" });
    client = loadClientWithBaseAddress(`http://127.0.0.1:${server.port}`);
  });
  after(() => server?.close(2000));

  test("removes a background through the library, over HTTP, charged in KRW", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const photo = fileURLToPath(new URL("photos/chelsea.png", FIXTURES));
    // The library sends size (default "preview"), type "auto", crop "false" and the file.
    const result = await client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey });
    const png = Uint8Array.from(Buffer.from(result.base64img, "base64"));
    assert.deepEqual(pngSize(png), { width: 451, height: 300 });
    assert.equal(String(result.resultWidth), "451");
    assert.equal(String(result.resultHeight), "300");
    const org = await g.h.admin("GET", `/orgs/${c.orgId}`);
    assert.equal(org.json.balanceKrw, 1000 - 22);
  });

  test("the library reads X-RateLimit-* and passes channels and bg_color", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const photo = fileURLToPath(new URL("photos/chelsea.png", FIXTURES));
    const rgba = await client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey });
    assert.deepEqual([String(rgba.rateLimit), String(rgba.rateLimitRemaining)], ["50000", String(50_000 - 22)]);
    assert.ok(Number(rgba.rateLimitReset) * 1000 > g.clock.now(), "Reset is in the future");
    const alpha = await client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey, channels: "alpha" });
    const alphaPng = Uint8Array.from(Buffer.from(alpha.base64img, "base64"));
    assert.equal(alphaPng[25], 0, "a greyscale PNG");
    assert.equal(String(alpha.rateLimitRemaining), String(50_000 - 44));
    const bg = await client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey, bg_color: "81d4fa" });
    assert.deepEqual(pngSize(Uint8Array.from(Buffer.from(bg.base64img, "base64"))), { width: 451, height: 300 });
    await assert.rejects(client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey, bg_color: "nope" }), (errors: unknown) => {
      assert.equal((errors as { code: string; title: string }[])[0]!.code, "invalid_parameter");
      assert.match((errors as { title: string }[])[0]!.title, /bg_color/);
      return true;
    });
  });

  test("the full tier through the library", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const photo = fileURLToPath(new URL("photos/chelsea.png", FIXTURES));
    const result = await client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey, size: "full", type: "product" });
    assert.deepEqual(pngSize(Uint8Array.from(Buffer.from(result.base64img, "base64"))), { width: 451, height: 300 });
  });

  test("the library surfaces our error envelope as its error list", async () => {
    const photo = fileURLToPath(new URL("photos/chelsea.png", FIXTURES));
    await assert.rejects(
      client.removeBackgroundFromImageFile({ path: photo, apiKey: "pd_live_" + "N0tAKey".repeat(6) }),
      (errors: unknown) => {
        assert.ok(Array.isArray(errors), JSON.stringify(errors));
        assert.equal((errors as { code: string }[])[0]!.code, "invalid_api_key");
        return true;
      },
    );
    const c = await g.h.customer({ creditKrw: 1000 });
    await assert.rejects(client.removeBackgroundFromImageFile({ path: photo, apiKey: c.liveKey, size: "4k" }), (errors: unknown) => {
      assert.equal((errors as { code: string }[])[0]!.code, "unsupported_parameter");
      return true;
    });
  });
});
