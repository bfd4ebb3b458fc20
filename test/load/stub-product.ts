// A stand-in product service for gateway load runs (split deployment, PRODUCT_URL):
// answers every POST with a fixed PNG after a fixed delay, like the stub model but
// without the pipeline's per-image CPU work (resizing to the model's 1024 × 1024 input
// and back costs more than 100 ms of CPU per call on this machine, which would cap a
// 2-core box near 10 paid calls a second and measure the imaging, not the gateway).
// Run as its own process: `node --import tsx test/load/stub-product.ts <delayMs>`;
// it prints `{"port":N}` once listening.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";

const delayMs = Number(process.argv[2] ?? "50");
const png = readFileSync(new URL("../fixtures/images/orient-upright.png", import.meta.url));
const headers = {
  "content-type": "image/png",
  "content-length": String(png.length),
  "x-width": "64",
  "x-height": "48",
  "x-processing-ms": String(delayMs),
  "x-foreground-top": "0",
  "x-foreground-left": "0",
  "x-foreground-width": "64",
  "x-foreground-height": "48",
};

const server = createServer((req, res) => {
  // The body is read to the end (as the real product does) and then answered.
  req.resume();
  req.on("end", () => {
    setTimeout(() => {
      res.writeHead(200, { ...headers, "x-pd-request-id": String(req.headers["x-pd-request-id"] ?? "") });
      res.end(png);
    }, delayMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  console.log(JSON.stringify({ port: typeof addr === "object" && addr ? addr.port : 0 }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
