// A relay between a Redis client under test and the server. It records the commands the
// client sends, so a test counts its own connection's round trips on a server the other
// test lanes share (INFO commandstats counts everyone's, and ioredis's MONITOR mode breaks
// when the server is busy: "Command queue state error"); and it can hold Redis's answers
// back, so a test sets when a reply arrives, not the machine's load.
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

export interface RedisRelay {
  /** The Redis URL with the relay's address in place of the server's (same database). */
  url: string;
  /** Each command its clients sent, in order: the name in lower case, then the arguments. */
  commands: string[][];
  /** Redis's answers reach the clients this much later from now on (0: at once). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

/**
 * Splits RESP requests (arrays of bulk strings, or an inline line) off the front of `buf`.
 * Returns what is left: the start of a request still arriving.
 */
function takeCommands(buf: Buffer, out: string[][]): Buffer {
  let at = 0;
  for (;;) {
    const lineEnd = buf.indexOf("\r\n", at);
    if (lineEnd < 0) return buf.subarray(at);
    if (buf[at] !== 0x2a /* "*" */) {
      const words = buf.toString("utf8", at, lineEnd).trim().split(/\s+/).filter(Boolean);
      if (words.length) out.push([words[0]!.toLowerCase(), ...words.slice(1)]);
      at = lineEnd + 2;
      continue;
    }
    const count = Number(buf.toString("latin1", at + 1, lineEnd));
    const args: string[] = [];
    let p = lineEnd + 2;
    for (let i = 0; i < count; i++) {
      const headEnd = buf.indexOf("\r\n", p);
      if (headEnd < 0) return buf.subarray(at);
      const len = Number(buf.toString("latin1", p + 1, headEnd));
      if (buf.length < headEnd + 2 + len + 2) return buf.subarray(at);
      args.push(buf.toString("utf8", headEnd + 2, headEnd + 2 + len));
      p = headEnd + 2 + len + 2;
    }
    if (args.length) out.push([args[0]!.toLowerCase(), ...args.slice(1)]);
    at = p;
  }
}

export async function redisRelay(url: string): Promise<RedisRelay> {
  const target = new URL(url);
  const commands: string[][] = [];
  let delayMs = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", end).on("close", () => {
        sockets.delete(s);
        end();
      });
    }
    let pending: Buffer = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      pending = takeCommands(Buffer.concat([pending, chunk]), commands);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      const d = delayMs;
      if (d === 0) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const relayed = new URL(url);
  relayed.hostname = "127.0.0.1";
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    commands,
    setDelay: (ms) => void (delayMs = ms),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
