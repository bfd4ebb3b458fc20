// Starts one of the load suite's helper servers (the stand-in product, the bare Hono
// baseline) as its own process; each prints `{"port":N}` once listening.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TS_LOADER } from "../support/ts-loader.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface ChildServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `script` is relative to the repository root; resolves once the child listens. */
export async function startChildServer(script: string, args: string[] = []): Promise<ChildServer> {
  const child: ChildProcess = spawn(process.execPath, [...TS_LOADER, script, ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      buf += d;
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before listening`)));
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
