// The split deployment (PRODUCT_URL): a gateway process sends each product attempt to
// another process's internal product endpoint. That endpoint does no billing of its
// own, so it is served only to callers holding the deployment's operator token; the
// gateway presents it here, and app.ts checks it on the product side.
export type ProductFetch = (req: Request, signal: AbortSignal) => Promise<Response>;

export function remoteProduct(baseUrl: string, operatorToken: string): ProductFetch {
  return async (req, signal) => {
    const url = new URL(new URL(req.url).pathname, baseUrl);
    const headers = new Headers(req.headers);
    headers.set("authorization", `Bearer ${operatorToken}`);
    // Sent as bytes (the gateway holds the whole body anyway) so the product sees its
    // Content-Length and charges its receive budget the real size, not the 12 MB cap.
    const body = await req.arrayBuffer();
    return fetch(url, { method: req.method, headers, body, signal });
  };
}
