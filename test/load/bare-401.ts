// The refusal rows' baseline: a bare Hono app on the same Node server that answers every
// POST /v1.0/removebg with the spec's 401 envelope and a request ID, and nothing else
// (no key check, no log, no metrics). What the gateway's refusals are measured against
// in the same run, on the same machine: the ratio says what our own code costs.
// Run as its own process: `node --import tsx test/load/bare-401.ts`; prints `{"port":N}`.
import { Hono } from "hono";
import { serve } from "@hono/node-server";

const app = new Hono();
let n = 0;
app.post("/v1.0/removebg", (c) => {
  const requestId = `bare-${Date.now().toString(36)}-${(n++).toString(36)}`;
  c.header("x-pd-request-id", requestId);
  return c.json({ errors: [{ title: "Missing API key: send it in the X-Api-Key header", code: "invalid_api_key" }] }, 401);
});
const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  console.log(JSON.stringify({ port: info.port }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
