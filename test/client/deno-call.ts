// Run by client.test.ts under Deno (deno run --allow-net): one call through the client
// with the key and base URL given as arguments, printed as one JSON line. Shows that
// src/client runs outside Node. No Node built-ins and no Deno types on purpose: tsc
// checks this file too.
import { createClient, PixeldropError } from "../../src/client/index.ts";

const [baseUrl, apiKey, base64] = (globalThis as unknown as { Deno: { args: string[] } }).Deno.args;
const image = Uint8Array.from(atob(base64!), (c) => c.charCodeAt(0));
const client = createClient({ apiKey: apiKey!, baseUrl: baseUrl!, maxResends: 0 });
try {
  const r = await client.removeBackground(new Blob([image]), { size: "preview" });
  console.log(JSON.stringify({ ok: true, signature: [...r.bytes.subarray(0, 4)], requestId: r.requestId, chargedKrw: r.chargedKrw, width: r.width }));
} catch (err) {
  if (!(err instanceof PixeldropError)) throw err;
  console.log(JSON.stringify({ ok: false, status: err.status, code: err.code, requestId: err.requestId }));
}
