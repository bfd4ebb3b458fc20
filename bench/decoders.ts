// npm run bench:decoders: the JPEG decoders we tried, on the 12 MP bench JPEG (bench/inputs.ts),
// at full size and at each scale a library offers, each (library, scale) in a fresh process
// (bench/decoders-child.ts): start-up (import, compile, instantiate), the first decode, the
// median of later decodes, and the process's peak RSS (a bare Node process's is printed
// first, to subtract). The output is RGBA in every row.
//
// `jpeg-turbo` (ours, @cwasm/jpeg-turbo), `mozjpeg` (@jsquash/jpeg, the decoder before) and
// `imagescript` are installed with the project. The others are not dependencies; to measure
// them, install them into a folder of their own and name it:
//
//   npm install --prefix /tmp/pd-decoders wasm-vips sharp && rm -rf /tmp/pd-decoders/node_modules/@img/sharp-linux* /tmp/pd-decoders/node_modules/@img/sharp-libvips-linux*
//   npm run bench:decoders -- [--runs 5] [--candidates /tmp/pd-decoders/node_modules] [--libs jpeg-turbo,mozjpeg,...]
//
// (sharp loads its native build first when one is installed: removing it leaves @img/sharp-wasm32.)
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchInputs } from "./inputs.ts";
import { scratchDir } from "./imaging-timing.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const runs = Number(arg("runs", "5"));
const candidates = arg("candidates", "");
const libs = arg("libs", candidates ? "jpeg-turbo,mozjpeg,imagescript,wasm-vips,sharp-wasm32" : "jpeg-turbo,mozjpeg,imagescript").split(",");
/** The scales each library offers, in eighths of each side. */
const SCALES: Record<string, number[]> = {
  "jpeg-turbo": [8, 6, 4, 3, 2, 1],
  mozjpeg: [8],
  imagescript: [8],
  "wasm-vips": [8, 4, 2, 1],
  "sharp-wasm32": [8, 4, 2, 1],
};
const root = fileURLToPath(new URL("../", import.meta.url));

const [input] = await benchInputs();
const path = join(scratchDir(), "12mp.jpg");
writeFileSync(path, input!.bytes);

function child(cfg: object): Record<string, number | string> | { error: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "bench/decoders-child.ts", JSON.stringify(cfg)], { cwd: root, encoding: "utf8", maxBuffer: 1 << 24 });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) return { error: (r.stderr.trim().split("\n").find((l) => /Error/.test(l)) ?? `exit ${r.status}`).slice(0, 160) };
  return JSON.parse(line);
}

const bare = spawnSync(process.execPath, ["-e", "console.log(process.resourceUsage().maxRSS / 1024)"], { encoding: "utf8" });
const loaded = spawnSync(process.execPath, ["--import", "tsx", "-e", "console.log(process.resourceUsage().maxRSS / 1024)"], { encoding: "utf8", cwd: root });
console.log(`# npm run bench:decoders — ${new Date().toISOString()}`);
console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load ${loadavg()[0]!.toFixed(2)}; input ${input!.width} x ${input!.height} JPEG (${(input!.bytes.length / 1e6).toFixed(2)} MB, 4:4:4); ${runs} decodes after the first`);
console.log(`peak RSS of a bare node process ${Number(bare.stdout).toFixed(0)} MiB, with tsx ${Number(loaded.stdout).toFixed(0)} MiB`);
console.log("");
console.log("| library | scale | output | start-up ms | first decode ms | decode ms (median) | min | peak RSS MiB |");
console.log("|---|---|---|---:|---:|---:|---:|---:|");
for (const lib of libs) {
  for (const eighths of SCALES[lib] ?? [8]) {
    const r = child({ lib, eighths, runs, input: path, ...(candidates ? { candidates } : {}) });
    const scale = eighths === 8 ? "full" : `${eighths}/8`;
    if ("error" in r) {
      console.log(`| ${lib} | ${scale} | failed: ${r.error} | | | | | |`);
      continue;
    }
    const n = (k: string) => Number(r[k]).toFixed(0);
    console.log(`| ${lib} | ${scale} | ${r.width} x ${r.height} | ${n("startMs")} | ${n("firstMs")} | ${n("medianMs")} | ${n("minMs")} | ${n("peakRssMiB")} |`);
  }
}
console.log("");
console.log(`Load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
