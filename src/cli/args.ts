// Command-line parsing for `pixeldrop remove`. Returns a value or a usage error text.
import { parseArgs } from "node:util";
import { SIZES, type Size } from "../product/params.ts";

export const USAGE = `usage: pixeldrop remove <file-or-folder>... [-o <dir>] [--size ${SIZES.join("|")}]
                        [--model small|medium|<file.onnx>] [--backend auto|wasm|native] [--threads N]

Removes the background of each image (JPEG, PNG, WebP; folders are searched, not
recursively) and writes <name>.png into the output folder (default ./cutouts).`;

export interface RemoveArgs {
  inputs: string[];
  outDir: string;
  size: Size | undefined;
  model: string;
  backend: "auto" | "wasm" | "native";
  threads: number | undefined;
}

export function parseRemoveArgs(argv: string[]): { ok: true; args: RemoveArgs } | { ok: false; message: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        out: { type: "string", short: "o" },
        size: { type: "string" },
        model: { type: "string" },
        backend: { type: "string" },
        threads: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  const v = parsed.values;
  if (v.help) return { ok: false, message: "" };
  const [command, ...inputs] = parsed.positionals;
  if (command !== "remove") return { ok: false, message: command ? `unknown command: ${command}` : "" };
  if (inputs.length === 0) return { ok: false, message: "no input files or folders given" };
  if (v.size !== undefined && !(SIZES as readonly string[]).includes(v.size)) {
    return { ok: false, message: `--size must be one of ${SIZES.join(", ")}` };
  }
  const backend = v.backend ?? "auto";
  if (backend !== "auto" && backend !== "wasm" && backend !== "native") {
    return { ok: false, message: "--backend must be auto, wasm or native" };
  }
  let threads: number | undefined;
  if (v.threads !== undefined) {
    threads = Number(v.threads);
    if (!Number.isInteger(threads) || threads < 1 || threads > 64) return { ok: false, message: "--threads must be 1..64" };
  }
  return {
    ok: true,
    args: { inputs, outDir: v.out ?? "cutouts", size: v.size as Size | undefined, model: v.model ?? "small", backend, threads },
  };
}
