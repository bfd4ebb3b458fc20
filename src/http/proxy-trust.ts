// TRUST_PROXY: which proxies in front of us may name the client. Three forms
// (docs/DEPLOY.md, "The client address"):
// - `false` (the default, also `0`, `no`): no proxy; X-Forwarded-For and
//   X-Forwarded-Proto are ignored and the client is the connection's peer.
// - a hop count, `1` to `8` (`true`/`yes` = 1): that many proxies in a row, each
//   appending the address it saw (or, the first, overwriting the header). The client is
//   the entry that many places from the right; the ones before it were written by the
//   client and are never believed.
// - a comma-separated list of proxy addresses or ranges (`10.0.0.0/8,fd00::/8`): only a
//   peer in the list is believed, and from the right the first entry outside the list is
//   the client, whatever the number of proxies. When every entry is inside the list, the
//   client is the rightmost entry, the address the peer itself saw: entries further left
//   were written by whoever connected to it, which may be a client inside a listed range
//   writing any listed address it likes.
// Parsed once by src/config.ts; this file imports nothing but ip-address.ts, so the
// config may read it.
import { inRange, parseIp, parseRange, type IpRange } from "./ip-address.ts";

export type ProxyTrust =
  | { readonly kind: "none" }
  | { readonly kind: "hops"; readonly hops: number }
  | { readonly kind: "ranges"; readonly ranges: readonly IpRange[] };

export const NO_PROXY: ProxyTrust = { kind: "none" };

/** More hops than any real chain of proxies: a typo, not a setting. */
export const MAX_PROXY_HOPS = 8;

/** The setting's value, or undefined when it is none of the three forms. */
export function parseProxyTrust(text: string): ProxyTrust | undefined {
  const t = text.trim().toLowerCase();
  if (t === "false" || t === "no" || t === "0") return NO_PROXY;
  if (t === "true" || t === "yes") return { kind: "hops", hops: 1 };
  if (/^\d+$/.test(t)) {
    const hops = Number(t);
    return hops <= MAX_PROXY_HOPS ? { kind: "hops", hops } : undefined;
  }
  const ranges: IpRange[] = [];
  for (const part of t.split(",")) {
    const r = parseRange(part);
    if (!r) return undefined;
    ranges.push(r);
  }
  return ranges.length ? { kind: "ranges", ranges } : undefined;
}

const trusted = (trust: { ranges: readonly IpRange[] }, address: string): boolean => {
  const ip = parseIp(address);
  return ip !== undefined && trust.ranges.some((r) => inRange(ip, r));
};

/**
 * The client's address as written by the peer or a trusted proxy (not yet reduced for
 * limits: client-address.ts does that); undefined when nothing names one.
 */
export function forwardedClient(forwardedFor: string | null | undefined, trust: ProxyTrust, peer: string | undefined): string | undefined {
  if (trust.kind === "none" || !forwardedFor) return peer;
  if (trust.kind === "ranges" && (peer === undefined || !trusted(trust, peer))) return peer;
  const entries = forwardedFor.split(",").map((e) => e.trim()).filter((e) => e !== "");
  if (entries.length === 0) return peer;
  if (trust.kind === "hops") return entries[Math.max(0, entries.length - trust.hops)];
  for (let i = entries.length - 1; i >= 0; i--) if (!trusted(trust, entries[i]!)) return entries[i];
  // Every entry is in a listed range: the one the peer wrote, never one a client may have.
  return entries[entries.length - 1];
}

/** Whether X-Forwarded-Proto (and the like) from this peer may be believed. */
export function peerIsTrustedProxy(trust: ProxyTrust, peer: string | undefined): boolean {
  if (trust.kind === "none") return false;
  if (trust.kind === "hops") return true;
  return peer !== undefined && trusted(trust, peer);
}
