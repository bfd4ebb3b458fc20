// The client side of refused-upload.test.ts, run as its own process so that the server's
// event loop and the client's are not one (in one process the whole body is usually
// written before the server even answers, and nothing can go wrong).
// Usage: node refused-upload-client.mjs <json: { url, tries, cases: [{ name, path, headers, body }] }>
// body: "form" (fetch, multipart, Content-Length announced), "stream" (fetch, chunked),
// "node" (node:http, Content-Length announced). Prints { name: [outcome, ...] } as JSON.
import http from "node:http";

const BIG = 12_500_000;
const { url, tries, cases } = JSON.parse(process.argv[2]);

async function viaFetch(path, headers, kind) {
  let body;
  if (kind === "form") {
    body = new FormData();
    body.append("image_file", new Blob([new Uint8Array(BIG)]), "big.png");
  } else {
    let sent = 0;
    body = new ReadableStream({
      pull(c) {
        if (sent >= BIG) return c.close();
        c.enqueue(new Uint8Array(256 * 1024));
        sent += 256 * 1024;
      },
    });
  }
  try {
    const res = await fetch(`${url}${path}`, { method: "POST", headers, body, duplex: "half", signal: AbortSignal.timeout(20_000) });
    const json = await res.json();
    return `${res.status} ${json.errors?.[0]?.code}`;
  } catch (e) {
    return `fetch failed: ${e.cause?.code ?? e.cause?.message ?? e.message}`;
  }
}

function viaNodeHttp(path, headers) {
  return new Promise((resolve) => {
    const req = http.request(`${url}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "multipart/form-data; boundary=x", "content-length": String(BIG) },
    });
    let failed;
    const fail = (s) => {
      failed ??= s;
      setTimeout(() => resolve(failed), 50);
    };
    req.on("error", (e) => fail(`node:http failed: ${e.code ?? e.message}`));
    req.on("socket", (s) => s.on("error", (e) => fail(`socket failed: ${e.code}`)));
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      // A late EPIPE on the socket still counts: wait a little before calling it a success.
      res.on("end", () => setTimeout(() => resolve(failed ?? `${res.statusCode} ${JSON.parse(text).errors[0].code}`), 100));
    });
    req.end(Buffer.alloc(BIG));
  });
}

const out = {};
for (const c of cases) {
  out[c.name] = [];
  for (let i = 0; i < tries; i++) out[c.name].push(c.body === "node" ? await viaNodeHttp(c.path, c.headers) : await viaFetch(c.path, c.headers, c.body));
}
console.log(JSON.stringify(out));
