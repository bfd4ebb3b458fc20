// Command-line parsing for `pixeldrop remove`. Returns a value or a usage error text.
// With an API key (--api-key or PD_API_KEY) the images go to a running service through
// the client instead of the model running here.
import { parseArgs } from "node:util";
import { parseColour } from "../engine/imaging/background.ts";
import { PRESET_NAMES } from "../engine/inference/card-presets.ts";
import { DEFAULT_MODEL } from "../engine/inference/default-model.ts";
import { CHANNELS, SIZES, type Channels, type Size } from "../contract/params.ts";

/** --concurrency: files in flight at once in remote mode (each one a paid call of the org's 2 live slots, or the test key's 1). */
export const MAX_CONCURRENCY = 16;

/** Where remote mode sends images unless --base-url or PD_BASE_URL says otherwise: `npm start`'s address. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

export const USAGE = `usage: pixeldrop remove <file-or-folder>... [-o <dir>] [--size ${SIZES.join("|")}]
                        [--model int8-static|small|medium|int8|<file.onnx>] [--card <preset>|<card.json>]
                        [--backend auto|wasm|native] [--threads N] [--input-side N]
                        [--channels rgba|alpha] [--bg-color <hex or CSS name>] [--skip-existing]
                        [--api-key <key>] [--base-url <url>] [--concurrency N]
       pixeldrop assemble [int8-static|small|medium|int8]...
       pixeldrop doctor [--json]
       pixeldrop reconcile --from <day> --to <day> [--json] [--base-url <url>]

Removes the background of each image (JPEG, PNG, WebP; folders are searched, not
recursively) and writes <name>.png into the output folder (default ./cutouts). When
several inputs share a name (cat.jpg, cat.webp) each keeps its extension instead
(cat.jpg.png, cat.webp.png; then -2, -3 if still equal): nothing is overwritten.
--skip-existing leaves files whose output is already there (to resume a batch).
--channels alpha writes the mask alone; --bg-color lays the cut-out over a colour.
Locally by default; with --api-key (or PD_API_KEY) through the service at --base-url
(or PD_BASE_URL, default ${DEFAULT_BASE_URL}), billed to that key.
--card says how to feed a model file: a preset (${PRESET_NAMES.join(", ")}) or a card
file; without it a <name>.card.json beside the model is read (docs/MODEL.md, "Model cards").
--input-side N feeds the model an N x N picture instead of its own size (1024 for ours,
any multiple of 64 up to it): faster, and a different mask (docs/MODEL.md, "The input size").
\`assemble\` builds the model files now (checked by sha256) instead of on first use.
\`doctor\` says whether this machine's GPU can run the model (WebGPU needs Deno:
deno run -A bin/pixeldrop.mjs doctor) and, if a GPU is there but unusable, what is
missing and how to fix it (exit 1).
\`reconcile\` compares a service's payment provider records with its ledger (operator
token in PD_OPERATOR_TOKEN; pixeldrop reconcile --help).`;

export interface RemoveArgs {
  inputs: string[];
  outDir: string;
  size: Size | undefined;
  model: string;
  /** --card: a preset name or a card file's path; absent: the card beside the model or its manifest entry. */
  card?: string;
  backend: "auto" | "wasm" | "native";
  threads: number | undefined;
  /** --input-side: the model's input side when not its own. */
  inputSide?: number;
  /** Absent: rgba. */
  channels?: Channels;
  /** The --bg-color text, already checked (hex or CSS colour name). */
  bgColor?: string;
  skipExisting: boolean;
  /** Files in flight at once; above 1 only in remote mode. */
  concurrency: number;
  /** Present in remote mode only. */
  remote?: { apiKey: string; baseUrl: string };
}

export type Env = Readonly<Record<string, string | undefined>>;

export function parseRemoveArgs(argv: string[], env: Env = {}): { ok: true; args: RemoveArgs } | { ok: false; message: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        out: { type: "string", short: "o" },
        size: { type: "string" },
        model: { type: "string" },
        card: { type: "string" },
        backend: { type: "string" },
        threads: { type: "string" },
        "input-side": { type: "string" },
        "api-key": { type: "string" },
        "base-url": { type: "string" },
        channels: { type: "string" },
        "bg-color": { type: "string" },
        "skip-existing": { type: "boolean" },
        concurrency: { type: "string" },
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
  let inputSide: number | undefined;
  if (v["input-side"] !== undefined) {
    inputSide = Number(v["input-side"]);
    if (!Number.isInteger(inputSide) || inputSide < 1) return { ok: false, message: "--input-side must be a positive integer (a side the model takes)" };
  }
  if (v.channels !== undefined && !(CHANNELS as readonly string[]).includes(v.channels)) {
    return { ok: false, message: `--channels must be one of ${CHANNELS.join(", ")}` };
  }
  if (v["bg-color"] !== undefined && !parseColour(v["bg-color"])) {
    return { ok: false, message: "--bg-color must be a hex colour (81d4fa, #81d4fa, 81d4fa77) or a CSS colour name" };
  }
  let concurrency = 1;
  if (v.concurrency !== undefined) {
    concurrency = Number(v.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
      return { ok: false, message: `--concurrency must be 1..${MAX_CONCURRENCY}` };
    }
  }
  const args: RemoveArgs = {
    inputs,
    outDir: v.out ?? "cutouts",
    size: v.size as Size | undefined,
    model: v.model ?? DEFAULT_MODEL,
    ...(v.card !== undefined ? { card: v.card } : {}),
    backend,
    threads,
    ...(inputSide !== undefined ? { inputSide } : {}),
    ...(v.channels !== undefined ? { channels: v.channels as Channels } : {}),
    ...(v["bg-color"] !== undefined ? { bgColor: v["bg-color"] } : {}),
    skipExisting: v["skip-existing"] ?? false,
    concurrency,
  };

  const apiKey = v["api-key"] ?? env.PD_API_KEY;
  const baseUrl = v["base-url"] ?? env.PD_BASE_URL;
  if (apiKey === undefined || apiKey === "") {
    if (v["api-key"] === "") return { ok: false, message: "--api-key is empty" };
    if (v["base-url"] !== undefined) return { ok: false, message: "--base-url needs an API key (--api-key or PD_API_KEY)" };
    // One model session runs one image at a time: more would only queue.
    if (concurrency > 1) return { ok: false, message: "--concurrency needs an API key (--api-key or PD_API_KEY): a local run does one image at a time" };
    return { ok: true, args };
  }
  // The model options describe a local run; silently ignoring them would surprise.
  const localOnly = (["model", "card", "backend", "threads", "input-side"] as const).filter((o) => v[o] !== undefined);
  if (localOnly.length) {
    return { ok: false, message: `--${localOnly.join(", --")} only apply without an API key (--api-key or PD_API_KEY is set)` };
  }
  const url = baseUrl || DEFAULT_BASE_URL;
  if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) return { ok: false, message: "--base-url must be an http:// or https:// URL" };
  args.remote = { apiKey, baseUrl: url };
  return { ok: true, args };
}
