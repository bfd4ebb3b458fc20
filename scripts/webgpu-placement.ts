// Which execution provider ONNX Runtime gives each node of a model on the WebGPU backend.
// ORT logs the placement at session start at its verbose level ("Node placements", then
// per provider "Node(s) placed on [X]. Number of nodes: N" and one line per node); the
// WebAssembly runtime writes its log to the process's stderr, not through console, so it
// is read from a child process:
//   deno run -A scripts/webgpu-placement.ts <model.onnx>        prints the JSON summary
// Used by test/deno/webgpu_test.ts (no node of the GPU form on the CPU) and bench/webgpu.ts.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configureOrtWeb, importOrtWeb, ortWebSessionOptions } from "../src/engine/inference/backend-ort-web.ts";
import { PACKAGE_WASM_DIR } from "../src/engine/assets/paths.ts";

export interface Placement {
  /** Nodes per provider, as ORT counts them after its graph optimisations. */
  providers: Record<string, number>;
  /** "OpType (name)" of every node not on the WebGPU provider. */
  offGpu: string[];
}

/** Reads ORT's verbose session log. */
export function parsePlacement(log: string): Placement {
  const providers: Record<string, number> = {};
  const offGpu: string[] = [];
  let current = "";
  for (const line of log.split("\n")) {
    const at = line.indexOf("VerifyEachNodeIsAssignedToAnEp] ");
    if (at < 0) continue;
    const text = line.slice(at + "VerifyEachNodeIsAssignedToAnEp] ".length);
    const head = /placed on \[(\w+)\]\. Number of nodes: (\d+)/.exec(text);
    if (head) {
      current = head[1]!;
      providers[current] = Number(head[2]);
    } else if (/^\s+\S+ \(.*\)$/.test(text) && current !== "WebGpuExecutionProvider") offGpu.push(text.trim());
  }
  return { providers, offGpu };
}

/** Starts a WebGPU session of the model in a child Deno process and reports its placement. */
export function webgpuPlacement(modelPath: string): Promise<Placement> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["run", "-A", fileURLToPath(import.meta.url), modelPath], {
      env: { ...process.env, DENO_WEBGPU_BACKEND: process.env.DENO_WEBGPU_BACKEND ?? "vulkan,metal,dx12" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let log = "";
    child.stderr!.on("data", (b: Buffer) => (log += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const placement = parsePlacement(log);
      if (code !== 0 || Object.keys(placement.providers).length === 0) reject(new Error(`no placement logged (exit ${code}): ${log.slice(-500)}`));
      else resolve(placement);
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ort = await importOrtWeb("webgpu");
  configureOrtWeb(ort, PACKAGE_WASM_DIR, 1);
  const bytes = new Uint8Array(readFileSync(process.argv[2]!));
  const session = await ort.InferenceSession.create(bytes, { ...ortWebSessionOptions("webgpu"), logSeverityLevel: 0, logVerbosityLevel: 0 });
  await session.release();
}
