// The peer address from whatever the runtime passes as Hono's env: Node's
// @hono/node-server gives { incoming: IncomingMessage }, Deno.serve gives
// { remoteAddr: { hostname } }.
export function remoteAddress(_req: Request, env: unknown): string | undefined {
  const e = env as { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: { hostname?: string } } | undefined;
  return e?.incoming?.socket?.remoteAddress ?? e?.remoteAddr?.hostname;
}
