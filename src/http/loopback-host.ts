// Whether a host name or address is this machine's loopback only. One rule for two
// checks: the HOST a development server listens on (config.ts: the developer mailbox is
// registered only there), and the Host a request to that mailbox names (a page that
// rebinds its own DNS name to 127.0.0.1 reaches the port, but under its own name).

/** `localhost`, `127.x.y.z`, `::1` or `[::1]`. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host);
}
