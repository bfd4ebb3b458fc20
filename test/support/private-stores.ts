// A private PostgreSQL and Redis for the fault suites, which stop and restart them
// mid-load. The shared servers in DATABASE_URL / REDIS_URL are used by every other
// suite at the same time and must never be touched, so these are started by
// .ci/services.sh (the same script CI uses) in a fresh temp directory on ports the OS
// picks, and stopped again at the end. Restarts go through pg_ctl and redis-cli, as an
// operator would do them; the commands are run asynchronously so the load the test
// generates keeps running while a store goes down.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";
export { freePort };

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SERVICES_SH = join(REPO_ROOT, ".ci/services.sh");

function pgBinDir(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin/initdb")))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length ? join(base, versions[versions.length - 1]!, "bin") : undefined;
}

/**
 * Why the fault suites cannot run here, or false. Checked before services.sh is ever
 * called, because that script installs missing packages (right in CI, not in a test).
 */
export function privateStoresSkip(): string | false {
  if (!pgBinDir()) return "PostgreSQL server binaries not installed";
  if (spawnSync("redis-server", ["--version"]).status !== 0) return "redis-server not installed";
  if (spawnSync("redis-cli", ["--version"]).status !== 0) return "redis-cli not installed";
  return false;
}


export interface PrivateStores {
  databaseUrl: string;
  redisUrl: string;
  pgPort: number;
  redisPort: number;
  /** `pg_ctl stop -m fast`: open connections are told "terminating", new ones refused. */
  stopPostgres(): Promise<void>;
  /** Starts whatever is down (services.sh start is idempotent). */
  start(): Promise<void>;
  /** `pg_ctl restart -m fast`: down and back up in one step. */
  restartPostgres(): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend: the server keeps its sockets (the
   * kernel still accepts connections) and answers nothing, like a frozen VM or a
   * partition. `thawPostgres` sends SIGCONT to the same processes.
   */
  freezePostgres(): Promise<void>;
  thawPostgres(): Promise<void>;
  /** `redis-cli shutdown nosave`: Redis comes back empty (no permits, no scripts). */
  stopRedis(): Promise<void>;
  /** Stops both and deletes the data directory. Safe to call twice. */
  destroy(): Promise<void>;
}

export async function startPrivateStores(): Promise<PrivateStores> {
  const dir = await mkdtemp(join(tmpdir(), "pixeldrop-faults-"));
  // The postgres account (when we are root) must reach its data directory inside.
  await chmod(dir, 0o755);
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const env = { ...process.env, PD_SERVICES_DIR: dir, PD_PG_PORT: String(pgPort), PD_REDIS_PORT: String(redisPort) };
  const services = (cmd: "start" | "stop") => run("bash", [SERVICES_SH, cmd], { env, timeout: 120_000 });
  const bin = pgBinDir()!;
  const asPostgres = (args: string[]) =>
    process.getuid?.() === 0 ? run("runuser", ["-u", "postgres", "--", ...args], { timeout: 60_000 }) : run(args[0]!, args.slice(1), { timeout: 60_000 });

  await services("start");
  let destroyed = false;
  let frozen: number[] = [];
  /** The postmaster (first line of postmaster.pid) and its children. */
  async function postgresPids(): Promise<number[]> {
    const postmaster = Number((await readFile(join(dir, "pg", "postmaster.pid"), "utf8")).split("\n")[0]);
    const children = await run("pgrep", ["-P", String(postmaster)]).then(
      (r) => r.stdout.split("\n").filter(Boolean).map(Number),
      () => [] as number[],
    );
    return [postmaster, ...children];
  }
  return {
    databaseUrl: `postgres://postgres@127.0.0.1:${pgPort}/pixeldrop`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    pgPort,
    redisPort,
    async stopPostgres() {
      await asPostgres([join(bin, "pg_ctl"), "-D", join(dir, "pg"), "-m", "fast", "-w", "stop"]);
    },
    async start() {
      await services("start");
    },
    async restartPostgres() {
      await asPostgres([join(bin, "pg_ctl"), "-D", join(dir, "pg"), "-l", join(dir, "pg.log"), "-m", "fast", "-w", "restart"]);
    },
    async freezePostgres() {
      frozen = await postgresPids();
      for (const pid of frozen) process.kill(pid, "SIGSTOP");
    },
    async thawPostgres() {
      for (const pid of frozen.reverse()) process.kill(pid, "SIGCONT");
      frozen = [];
    },
    async stopRedis() {
      await run("redis-cli", ["-p", String(redisPort), "shutdown", "nosave"]).catch(() => {
        // redis-cli reports the dropped connection of a shutdown as an error on some versions.
      });
      for (let i = 0; i < 50; i++) {
        const up = await run("redis-cli", ["-p", String(redisPort), "ping"]).then(
          (r) => r.stdout.trim() === "PONG",
          () => false,
        );
        if (!up) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("private redis-server did not stop");
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const pid of frozen) process.kill(pid, "SIGCONT");
      await services("stop").catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
