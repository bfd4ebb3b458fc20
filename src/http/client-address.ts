// The client address used by per-IP limits (invalid-key guard, sign-in mail limits).
// Which X-Forwarded-For entry (if any) names the client is TRUST_PROXY's rule
// (proxy-trust.ts): entries a client wrote itself are never believed.
// IPv6 addresses are reduced to their /64: one customer line is handed a whole /64,
// so counting full addresses would give one host 2^64 fresh identities.
import { dottedOf, parseIp, sixtyFourOf } from "./ip-address.ts";
import { forwardedClient, type ProxyTrust } from "./proxy-trust.ts";

export function clientAddress(forwardedFor: string | undefined | null, trust: ProxyTrust, remote: string | undefined): string {
  const client = forwardedClient(forwardedFor, trust, remote);
  return client ? limitKey(client) : "unknown";
}

/**
 * An IPv4 address written as its parse would write it back (four parts, each 0-255,
 * no leading zeros): the usual case, taken as it is without the parse's BigInt work.
 */
const PLAIN_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An IPv4 address as it is; an IPv6 address as its /64 prefix ("2001:db8:1:2::/64"); anything else as given. */
export function limitKey(address: string): string {
  if (PLAIN_IPV4.test(address)) return address;
  const ip = parseIp(address);
  if (!ip) return address.trim();
  return ip.v6 ? sixtyFourOf(ip) : dottedOf(ip);
}
