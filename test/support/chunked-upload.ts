// A client that uploads up to `capBytes` with Transfer-Encoding: chunked over a real
// socket, as fast as the server takes it, and reports the answer's status and body (if
// it came before the server closed) and how much the server had taken by then.
import http from "node:http";

export interface UploadOutcome {
  status?: number;
  body: string;
  /** Bytes written when the exchange ended. */
  sentAtEnd: number;
  /** EPIPE / ECONNRESET when the server closed the upload before the answer was read. */
  err?: string;
}

export function chunkedUpload(port: number, path: string, headers: Record<string, string>, capBytes: number): Promise<UploadOutcome> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  return new Promise((resolve) => {
    let status: number | undefined;
    let body = "";
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path, headers: { ...headers, "transfer-encoding": "chunked" } }, (res) => {
      status = res.statusCode;
      res.on("data", (d: Buffer) => (body += d.toString()));
    });
    const done = (e?: Error) => resolve({ status, body, sentAtEnd: sent, ...(e ? { err: e.message } : {}) });
    req.on("error", done);
    req.on("close", () => done());
    const write = () => {
      while (sent < capBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}
