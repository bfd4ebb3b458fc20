// Runs test jobs in parallel lanes. Most of the suite waits (servers starting, timers,
// processes being killed and restarted), so on a 2-core machine three lanes finish the
// suite in a fraction of the time one takes. Each lane has stores of its own: a fresh
// database beside the one in DATABASE_URL and its own Redis database number, so a test
// that changes global state (the product's sale switch, the global permit set) never
// sees another lane's. Each job's output is printed whole when it ends, so the log reads
// file by file.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Redis database numbers the lanes use; the suites that name their own (6, 8–15) keep theirs. */
const LANE_REDIS_DBS = [0, 1, 2, 3, 4, 5, 7];

/**
 * A private database per lane on the server in DATABASE_URL, and a Redis database number
 * per lane. Returns each lane's environment and a function that drops the databases.
 */
export async function laneStores(lanes, env) {
  if (lanes > LANE_REDIS_DBS.length) throw new Error(`at most ${LANE_REDIS_DBS.length} lanes`);
  const envs = Array.from({ length: lanes }, () => ({ ...env }));
  const names = [];
  let admin;
  if (env.DATABASE_URL) {
    const { default: pg } = await import("pg");
    admin = new pg.Client({ connectionString: env.DATABASE_URL });
    await admin.connect();
    const run = randomBytes(4).toString("hex");
    for (let i = 0; i < lanes; i++) {
      const name = `pd_lane${i}_${run}`;
      await admin.query(`CREATE DATABASE ${name}`);
      names.push(name);
      const u = new URL(env.DATABASE_URL);
      u.pathname = `/${name}`;
      envs[i].DATABASE_URL = u.toString();
    }
  }
  if (env.REDIS_URL) {
    envs.forEach((e, i) => {
      const u = new URL(env.REDIS_URL);
      u.pathname = `/${LANE_REDIS_DBS[i]}`;
      e.REDIS_URL = u.toString();
    });
  }
  return {
    envs,
    async drop() {
      if (!admin) return;
      for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end();
    },
  };
}

/** The Node test runner's closing counts ("ℹ tests 12" …) from a job's output. */
export function runnerCounts(output) {
  const counts = {};
  for (const m of output.matchAll(/^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
  return counts;
}

/**
 * Runs `jobs` ({ label, command, args, env?, cwd }) on `envs.length` lanes, longest first
 * as given. Calls onDone({ job, status, output, seconds }) as each ends.
 */
export async function runLanes(jobs, envs, onDone) {
  const queue = [...jobs];
  async function lane(env) {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const started = performance.now();
      const result = await runJob(job, { ...env, ...job.env });
      onDone({ job, ...result, seconds: (performance.now() - started) / 1000 });
    }
  }
  await Promise.all(envs.map(lane));
}

/**
 * With PD_TEST_CPU=1 (and GNU time at /usr/bin/time), each job runs under `time` and its
 * CPU seconds (user + system, its children's included) come back with its result: on a
 * 2-core machine the suite is CPU-bound, so CPU, not wall time, says which file costs.
 */
const CPU_TIME = process.env.PD_TEST_CPU === "1" && existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;
const cpuDir = CPU_TIME ? mkdtempSync(join(tmpdir(), "pd-test-cpu-")) : undefined;
let jobNumber = 0;

function runJob(job, env) {
  return new Promise((resolve) => {
    const cpuFile = cpuDir && join(cpuDir, `${jobNumber++}.txt`);
    const [command, args] = cpuFile ? [CPU_TIME, ["-f", "%U %S", "-o", cpuFile, job.command, ...job.args]] : [job.command, job.args];
    const child = spawn(command, args, { cwd: job.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    child.on("error", (err) => chunks.push(Buffer.from(`could not start: ${err.message}\n`)));
    child.on("close", (code, signal) =>
      resolve({ status: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString(), cpuSeconds: cpuFile && cpuSecondsIn(cpuFile) }),
    );
  });
}

/** User + system seconds from `time -f "%U %S"` (its last line; a signal note may precede it). */
function cpuSecondsIn(file) {
  try {
    const [user, sys] = readFileSync(file, "utf8").trim().split("\n").at(-1).split(" ").map(Number);
    return Number.isFinite(user + sys) ? user + sys : undefined;
  } catch {
    return undefined;
  } finally {
    rmSync(file, { force: true });
  }
}
