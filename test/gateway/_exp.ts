import http from "node:http";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { serve } from "../../src/wiring/serve.ts";
import { gatewayHarness } from "./helpers.ts";
const g = await gatewayHarness();
const c = await g.h.customer({ creditKrw: 1000 });
const v = g.variant({ limiter: createMemoryLimiter() });
const server = await serve(v.app.fetch, { port: 0, hostname: "127.0.0.1" });
let sent = 0;
const chunk = Buffer.alloc(64 * 1024, 65);
const t0 = Date.now();
await new Promise<void>((resolve) => {
  const req = http.request({ host: "127.0.0.1", port: server.port, method: "POST", path: "/v1.0/removebg",
    headers: { "x-api-key": c.liveKey, "content-type": "multipart/form-data; boundary=b", "transfer-encoding": "chunked" } }, (res) => {
    console.log("status", res.statusCode, "sent so far", sent, "ms", Date.now() - t0);
    let body = ""; res.on("data", (d) => body += d); res.on("end", () => { console.log("body", body); });
  });
  req.on("error", (e) => { console.log("req error", e.message, "sent", sent); resolve(); });
  req.on("close", () => { console.log("req close, sent", sent, "ms", Date.now() - t0); resolve(); });
  const write = () => {
    while (sent < 200_000_000) {
      sent += chunk.length;
      if (!req.write(chunk)) { req.once("drain", write); return; }
    }
    req.end();
  };
  write();
});
await server.close(1000);
await g.close();
