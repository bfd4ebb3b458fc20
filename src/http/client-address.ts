// The client address used by per-IP limits (invalid-key guard, sign-in mail limits).
// With TRUST_PROXY the address is the LAST X-Forwarded-For entry: our load balancer
// appends (or overwrites with) the address it saw, while every entry before it was
// written by the client and could be invented to dodge the limit.
// IPv6 addresses are reduced to their /64: one customer line is handed a whole /64,
// so counting full addresses would give one host 2^64 fresh identities.

export function clientAddress(forwardedFor: string | undefined | null, trustProxy: boolean, remote: string | undefined): string {
  if (trustProxy && forwardedFor) {
    const last = forwardedFor.split(",").at(-1)?.trim();
    if (last) return limitKey(last);
  }
  return remote ? limitKey(remote) : "unknown";
}

/** An IPv4 address as it is; an IPv6 address as its /64 prefix ("2001:db8:1:2::/64"). */
export function limitKey(address: string): string {
  const a = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!a.includes(":")) return a;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) return mapped[1]!;
  const groups = expandIpv6(a);
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : a;
}

function expandIpv6(a: string): string[] | undefined {
  const halves = a.toLowerCase().split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  // A trailing embedded IPv4 (a.b.c.d) takes two groups; the /64 never reaches it.
  const width = (g: string[]) => g.reduce((n, x) => n + (x.includes(".") ? 2 : 1), 0);
  const missing = 8 - width(head) - width(tail);
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.slice(0, 4).every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.map((g) => (g.includes(".") ? g : String(parseInt(g, 16).toString(16))));
}
