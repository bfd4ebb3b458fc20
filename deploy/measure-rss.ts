// Memory of the two roles, for sizing deploy/compose.yaml and deploy/k8s: starts a
// product process (engine, real model) and a gateway-only process (PRODUCT_URL) as in
// the split deployment, sends 12 MP full-size requests through the gateway, and prints
// each process's RSS and peak RSS (VmHWM, Linux /proc) when ready and after each request.
//
//   node --import tsx deploy/measure-rss.ts [--runs 2] [--backend wasm] [--model <manifest name>, default the default model]
//        [--product-db embedded|shared]
//
// --product-db embedded gives the product process an in-memory PGlite (DATA_DIR=memory://);
// shared (default) gives both processes DATABASE_URL, which must then be set. Ports
// 18931/18932 on 127.0.0.1.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { benchInputs } from "../bench/inputs.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "2" },
    backend: { type: "string", default: "wasm" },
    model: { type: "string", default: DEFAULT_MODEL },
    "product-db": { type: "string", default: "shared" },
  },
});
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const TOKEN = `measure-${crypto.randomUUID()}`;
const shared = opt["product-db"] === "shared";
if (shared && !process.env.DATABASE_URL) throw new Error("--product-db shared needs DATABASE_URL");

function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (key: string) => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) / 1024);
  return `rss ${mib("VmRSS")} MiB, peak ${mib("VmHWM")} MiB`;
}

function start(env: Record<string, string>): ChildProcess {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "DATABASE_URL" && k !== "REDIS_URL") base[k] = v;
  return spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: { ...base, HOST: "127.0.0.1", NODE_ENV: "production", LOG_LEVEL: "warn", OPERATOR_TOKEN: TOKEN, KEY_PEPPER: "measure-pepper-0123456789", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

async function ready(url: string): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const [big] = await benchInputs(); // 4242 x 2828 JPEG
const stores = shared ? { DATABASE_URL: process.env.DATABASE_URL!, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) } : {};
const product = start({
  PORT: "18931",
  ...(shared ? { DATABASE_URL: process.env.DATABASE_URL! } : { DATA_DIR: "memory://" }),
  INFERENCE_BACKEND: opt.backend!,
  MODEL: opt.model!,
  POOL_SIZE: "1",
  THREADS_PER_SESSION: "2",
});
console.log(`product ready after ${await ready("http://127.0.0.1:18931")} ms: ${memory(product.pid!)}`);
const gateway = start({ PORT: "18932", PRODUCT_URL: "http://127.0.0.1:18931", ...(shared ? stores : { DATA_DIR: "memory://" }) });
const base = "http://127.0.0.1:18932";
console.log(`gateway ready after ${await ready(base)} ms: ${memory(gateway.pid!)}`);

try {
  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${base}/admin/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Record<string, string>;
  };
  const org = await admin("/orgs", { email: `measure-${crypto.randomUUID()}@example.com` });
  await admin(`/orgs/${org.orgId}/credit`, { amountKrw: 10_000 });
  const app = await admin(`/orgs/${org.orgId}/apps`, { name: "measure", productEnabled: true });
  const key = await admin(`/apps/${app.appId}/keys`, { kind: "live" });
  for (let i = 0; i < Number(opt.runs); i++) {
    const form = new FormData();
    form.append("image_file", new Blob([big.bytes as Uint8Array<ArrayBuffer>]), "big.jpg");
    form.append("size", "full");
    const t0 = Date.now();
    const res = await fetch(`${base}/v1.0/removebg`, { method: "POST", headers: { "x-api-key": key.key }, body: form });
    await res.arrayBuffer();
    console.log(`request ${i + 1}: ${res.status} in ${Date.now() - t0} ms; product ${memory(product.pid!)}; gateway ${memory(gateway.pid!)}`);
  }
} finally {
  for (const p of [gateway, product]) {
    const exited = new Promise((r) => p.once("exit", r));
    p.kill("SIGTERM");
    await exited;
  }
}
