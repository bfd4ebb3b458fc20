// npm run bench:cold: one image in a fresh process, as a new user meets Pixeldrop, against
// @imgly/background-removal-node doing the same job in the same run. Each row alternates
// ours and the peer's run by run, so a change in the machine's load falls on both; medians
// of --runs (default 3) of wall time, CPU seconds (user + system) and peak memory (the
// largest resident set of the child, from GNU time's wait4 rusage).
//
//   (a) `pixeldrop remove photo.jpg` from the packed tarball installed into an empty
//       project (no install scripts), against the peer's one-image script;
//   (b) the same CLI from this checkout (bin/pixeldrop.mjs, which runs dist/);
//   (c) createRemover() + one remove() + dispose() in a fresh Node process, against the
//       peer's removeBackground() in a fresh Node process;
//   (d) a one-test `deno test` file doing (c) with the installed package (ours only: the
//       peer's onnxruntime-node addon is not what a Deno user would run).
//
// The photo is 741×500 (made once from test/fixtures/photos/rocket.jpg, or --photo). The
// installed package's model is assembled before the timed runs (a first call after
// install assembles it once, 1-2 s, and is not what is measured here). The peer lives in
// its own scratch folder (--peer-dir, default /tmp/pd-peer), installed there with
// --ignore-scripts when missing (onnxruntime-node's install script fetches CUDA builds; its
// CPU binaries are in the package; sharp is lifted to 0.33, see installPeer), and runs on
// its bundled model files, offline. It runs
// its default model ("medium") unless --peer-model says otherwise.
//
//   npm run bench:cold -- [--runs 3] [--rows a,b,c,d] [--work /tmp/pd-cold] [--peer-dir /tmp/pd-peer]
//                         [--peer-model medium] [--photo file] [--threads N]
// Needs dist/ built (npm run build) and /usr/bin/time. npm installs run under flock /tmp/npm.lock.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { median } from "./median.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const RUNS = Number(arg("runs", "3"));
const ROWS = arg("rows", "a,b,c,d").split(",");
const WORK = arg("work", "/tmp/pd-cold");
const PEER = arg("peer-dir", "/tmp/pd-peer");
const PEER_MODEL = arg("peer-model", "medium");
const THREADS = Number(arg("threads", String(availableParallelism())));
const TIME = "/usr/bin/time";
const DENO = join(REPO, "node_modules/.bin/deno");

interface Sample {
  wallS: number;
  cpuS: number;
  peakMiB: number;
}

function say(s: string) {
  console.error(`bench:cold: ${s}`);
}

function sh(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 });
}

/** npm, one at a time across the machine's users. */
function npm(args: string[], cwd: string): string {
  return sh("flock", ["/tmp/npm.lock", "npm", ...args], cwd);
}

/** One timed child: wall, CPU and peak RSS as GNU time reports them. */
function timed(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Sample {
  const r = spawnSync(TIME, ["-f", "PDTIME %e %U %S %M", cmd, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = r.stderr.split("\n").find((l) => l.startsWith("PDTIME "));
  if (r.status !== 0 || !line) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  const [wall, user, sys, kb] = line.split(" ").slice(1).map(Number) as [number, number, number, number];
  return { wallS: wall, cpuS: user + sys, peakMiB: kb / 1024 };
}

/** The 741×500 JPEG every row cuts out. */
async function makePhoto(dir: string): Promise<string> {
  const given = arg("photo", "");
  const out = join(dir, given ? given.split("/").pop()! : "photo-741x500.jpg");
  if (given) {
    copyFileSync(given, out);
    return out;
  }
  const { Image } = (await import("imagescript")) as unknown as {
    Image: { decode(b: Uint8Array): Promise<{ resize(w: number, h: number): { encodeJPEG(q: number): Promise<Uint8Array> } }> };
  };
  const img = await Image.decode(readFileSync(join(REPO, "test/fixtures/photos/rocket.jpg")));
  writeFileSync(out, await img.resize(741, 500).encodeJPEG(90));
  return out;
}

function installOurs(dir: string): string {
  const project = join(dir, "consumer");
  rmSync(project, { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  say("npm pack (builds dist/) and install into an empty project");
  for (const f of readdirSync(dir)) if (f.endsWith(".tgz")) rmSync(join(dir, f));
  const packed = JSON.parse(((s) => s.slice(s.indexOf("[\n")))(npm(["pack", "--json", "--pack-destination", dir], REPO))) as { filename: string }[];
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  npm(["install", join(dir, packed[0]!.filename), "--ignore-scripts", "--omit=optional", "--no-audit", "--no-fund", "--prefer-offline"], project);
  sh(process.execPath, ["node_modules/pixeldrop/bin/pixeldrop.mjs", "assemble", DEFAULT_MODEL], project);
  writeFileSync(join(project, "once.mjs"), LIBRARY_ONCE);
  writeFileSync(join(project, "deno.json"), JSON.stringify({ nodeModulesDir: "manual" }));
  writeFileSync(join(project, "once_test.ts"), DENO_ONCE);
  return project;
}

function installPeer(): void {
  if (!existsSync(join(PEER, "node_modules/@imgly/background-removal-node/package.json"))) {
    say(`installing the peer into ${PEER} (--ignore-scripts)`);
    mkdirSync(PEER, { recursive: true });
    // The peer pins sharp ~0.32, whose install script downloads libvips from GitHub (not
    // reachable here, and skipped by --ignore-scripts); sharp 0.33 ships it as npm packages
    // with the same API for what the peer calls.
    writeFileSync(join(PEER, "package.json"), JSON.stringify({ name: "pd-peer", private: true, overrides: { sharp: "0.33.5" } }));
    npm(["install", "--ignore-scripts", "--no-audit", "--no-fund", "@imgly/background-removal-node"], PEER);
  }
  writeFileSync(join(PEER, "once.mjs"), PEER_ONCE);
}

const LIBRARY_ONCE = `import { readFileSync, writeFileSync } from "node:fs";
import { createRemover } from "pixeldrop";
const remover = await createRemover({ threads: Number(process.env.THREADS) || undefined });
const cut = await remover.remove(readFileSync(process.argv[2]));
await remover.dispose();
writeFileSync("cutout.png", cut.png);
`;

const DENO_ONCE = `import { createRemover } from "pixeldrop";
Deno.test("one cut-out", async () => {
  await using remover = await createRemover({ backend: "wasm", threads: Number(Deno.env.get("THREADS")) || undefined });
  const cut = await remover.remove(Deno.readFileSync(Deno.env.get("PHOTO")!));
  if (cut.png.length < 1000) throw new Error("no cut-out");
});
`;

// The peer's documented one-call API on a file, its PNG written out: the same job as
// \`pixeldrop remove\` on one file. Its resources resolve under the working directory.
const PEER_ONCE = `import { readFileSync, writeFileSync } from "node:fs";
import { removeBackground } from "@imgly/background-removal-node";
const blob = await removeBackground(new Blob([readFileSync(process.argv[2])], { type: "image/jpeg" }), { model: process.env.PEER_MODEL || "medium" });
writeFileSync("cutout.png", new Uint8Array(await blob.arrayBuffer()));
`;

interface Row {
  key: string;
  label: string;
  ours: () => Sample;
  peer?: () => Sample;
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");

async function main() {
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (apt-get install time)`);
  mkdirSync(WORK, { recursive: true });
  const photo = await makePhoto(WORK);
  const project = installOurs(WORK);
  installPeer();
  const env = { THREADS: String(THREADS), PEER_MODEL, PHOTO: photo };
  const out = join(WORK, "out");

  const rows: Row[] = [
    {
      key: "a",
      label: "one-image CLI call, installed package",
      ours: () => timed(process.execPath, ["node_modules/pixeldrop/bin/pixeldrop.mjs", "remove", photo, "-o", out, "--threads", String(THREADS)], project, env),
      peer: () => timed(process.execPath, ["once.mjs", photo], PEER, env),
    },
    {
      key: "b",
      label: "one-image CLI call, from the checkout (bin/ runs dist/)",
      // npm pack built dist/ just now; work going on in this checkout may have touched src/
      // since, which the freshness check would refuse: this row runs the dist/ just built.
      ours: () => timed(process.execPath, ["bin/pixeldrop.mjs", "remove", photo, "-o", out, "--threads", String(THREADS)], REPO, { ...env, PIXELDROP_ALLOW_STALE_DIST: "1" }),
      peer: () => timed(process.execPath, ["once.mjs", photo], PEER, env),
    },
    {
      key: "c",
      label: "createRemover() + one remove(), fresh Node process",
      ours: () => timed(process.execPath, ["once.mjs", photo], project, env),
      peer: () => timed(process.execPath, ["once.mjs", photo], PEER, env),
    },
    {
      key: "d",
      label: "one-test `deno test` file (createRemover + remove)",
      ours: () => timed(DENO, ["test", "-A", "--no-check", "once_test.ts"], project, env),
    },
  ].filter((r) => ROWS.includes(r.key) && (r.key !== "d" || existsSync(DENO)));

  const cpu = cpus()[0]?.model ?? "unknown CPU";
  console.log(`bench:cold: ${RUNS} run(s) per side, alternating; ${photo.split("/").pop()}; threads ${THREADS}; peer model ${PEER_MODEL}`);
  console.log(`${cpu}, ${cpus().length} cores, node ${process.version}; load at start ${load()}`);
  const results: { row: Row; ours: Sample[]; peer: Sample[] }[] = [];
  for (const row of rows) {
    const r = { row, ours: [] as Sample[], peer: [] as Sample[] };
    for (let i = 0; i < RUNS; i++) {
      // Alternate which side goes first, so neither always follows the other's page cache.
      const order = i % 2 === 0 ? (["ours", "peer"] as const) : (["peer", "ours"] as const);
      for (const side of order) {
        const run = side === "ours" ? row.ours : row.peer;
        if (!run) continue;
        let s: Sample;
        try {
          s = run();
        } catch (err) {
          say(`${row.key} ${side} run ${i + 1} failed, left out: ${(err as Error).message}`);
          continue;
        }
        r[side].push(s);
        say(`${row.key} ${side} run ${i + 1}: ${s.wallS.toFixed(2)} s wall, ${s.cpuS.toFixed(2)} s CPU, ${s.peakMiB.toFixed(0)} MiB (load ${loadavg()[0]!.toFixed(2)})`);
      }
    }
    results.push(r);
  }

  // The baseline of "cold ÷ warm": the same machine's warm bare 1024² inference of the default model, right after.
  const warm = execFileSync(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./warm-bare-child.ts", import.meta.url)), String(THREADS)], {
    cwd: REPO,
    encoding: "utf8",
  });
  const warmS = (JSON.parse(warm.trim().split("\n").pop()!) as { ms: number }).ms / 1000;
  say(`warm bare 1024² inference of ${DEFAULT_MODEL}: ${warmS.toFixed(2)} s (median of 3 after a first run)`);

  const m = (xs: Sample[], k: keyof Sample) => (xs.length ? median(xs.map((x) => x[k])) : Number.NaN);
  const fmt = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "—");
  console.log(
    `\n| one image, fresh process (medians) | ours wall s | peer wall s | wall ratio (≤ 0.85) | ours ÷ warm bare ${warmS.toFixed(2)} s (≤ 1.6) | ours CPU s | peer CPU s | CPU ratio | ours peak MiB | peer peak MiB | peak ratio (≤ 1.00) |`,
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const { row, ours, peer } of results) {
    const [ow, pw, oc, pc, om, pm] = [m(ours, "wallS"), m(peer, "wallS"), m(ours, "cpuS"), m(peer, "cpuS"), m(ours, "peakMiB"), m(peer, "peakMiB")];
    console.log(
      `| (${row.key}) ${row.label} | ${fmt(ow)} | ${fmt(pw)} | ${fmt(ow / pw)}× | ${fmt(ow / warmS)}× | ${fmt(oc)} | ${fmt(pc)} | ${fmt(oc / pc)}× | ${fmt(om, 0)} | ${fmt(pm, 0)} | ${fmt(om / pm)}× |`,
    );
  }
  const simd = /avx512/.test(readFileSync("/proc/cpuinfo", "utf8")) ? "AVX-512" : "AVX2";
  console.log(`\nSIMD: ${simd} (the peer's native kernels use it; WebAssembly SIMD is 128-bit)`);
  console.log(`\nload at end ${load()}`);
}

await main();
