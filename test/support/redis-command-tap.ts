// A pass-through in front of Redis that records the commands its clients send, name and
// arguments, in order. A test counts its own connection's round trips this way on a server
// the other test lanes share, where INFO commandstats counts everyone's commands and
// ioredis's MONITOR mode breaks when the server is busy ("Command queue state error").
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

export interface CommandTap {
  /** The Redis URL with the tap's address in place of the server's (same database). */
  url: string;
  /** Each command as sent: its name in lower case, then its arguments. */
  commands: string[][];
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

export async function tapRedis(url: string): Promise<CommandTap> {
  const target = new URL(url);
  const commands: string[][] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    let pending: Buffer = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      pending = takeCommands(Buffer.concat([pending, chunk]), commands);
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const tapped = new URL(url);
  tapped.hostname = "127.0.0.1";
  tapped.port = String((server.address() as AddressInfo).port);
  return {
    url: tapped.toString(),
    commands,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
