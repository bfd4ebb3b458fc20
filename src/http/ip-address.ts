// IP addresses as numbers, for the two questions asked of them: which /64 an IPv6 client
// counts as (client-address.ts) and whether an address lies in a trusted proxy's range
// (proxy-trust.ts). An IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a dual-stack
// Node socket reports for an IPv4 peer) is the IPv4 address.

export interface IpAddress {
  readonly v6: boolean;
  /** The address as an unsigned 32- (IPv4) or 128-bit (IPv6) number. */
  readonly value: bigint;
}

/** An address as written by a socket or a proxy: brackets, an IPv6 zone and a port (`[::1]:80`, `1.2.3.4:80`) are allowed. */
export function parseIp(text: string): IpAddress | undefined {
  let a = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.indexOf(":"));
  a = a.replace(/%.*$/, "");
  if (!a.includes(":")) {
    const v4 = parseV4(a);
    return v4 === undefined ? undefined : { v6: false, value: v4 };
  }
  const v6 = parseV6(a);
  if (v6 === undefined) return undefined;
  // ::ffff:0:0/96 holds the IPv4 addresses.
  if (v6 >> 32n === 0xffffn) return { v6: false, value: v6 & 0xffffffffn };
  return { v6: true, value: v6 };
}

function parseV4(a: string): bigint | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(a);
  if (!m) return undefined;
  let v = 0n;
  for (let i = 1; i <= 4; i++) {
    const n = Number(m[i]);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseV6(a: string): bigint | undefined {
  const halves = a.toLowerCase().split("::");
  if (halves.length > 2) return undefined;
  const words = (part: string): bigint[] | undefined => {
    if (part === "") return [];
    const out: bigint[] = [];
    const groups = part.split(":");
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]!;
      if (i === groups.length - 1 && g.includes(".")) {
        // A trailing dotted IPv4 address fills the last two groups.
        const v4 = parseV4(g);
        if (v4 === undefined) return undefined;
        out.push(v4 >> 16n, v4 & 0xffffn);
      } else if (/^[0-9a-f]{1,4}$/.test(g)) out.push(BigInt(parseInt(g, 16)));
      else return undefined;
    }
    return out;
  };
  const head = words(halves[0]!);
  const tail = halves.length === 2 ? words(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  let v = 0n;
  for (const w of [...head, ...Array<bigint>(halves.length === 2 ? missing : 0).fill(0n), ...tail]) v = (v << 16n) | w;
  return v;
}

/** A range of addresses: `10.0.0.0/8`, `fd00::/8`, or one address (its /32 or /128). */
export interface IpRange {
  readonly v6: boolean;
  readonly value: bigint;
  readonly prefix: number;
}

export function parseRange(text: string): IpRange | undefined {
  const [addr, bits, extra] = text.trim().split("/");
  if (addr === undefined || extra !== undefined) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const width = ip.v6 ? 128 : 32;
  // A mapped IPv6 range (::ffff:10.0.0.0/104) counts its prefix over the IPv4 part.
  const mappedOffset = !ip.v6 && addr.includes(":") ? 96 : 0;
  const prefix = bits === undefined ? width : /^\d{1,3}$/.test(bits) ? Number(bits) - mappedOffset : NaN;
  if (!(prefix >= 0 && prefix <= width)) return undefined;
  return { v6: ip.v6, value: ip.value, prefix };
}

export function inRange(ip: IpAddress, range: IpRange): boolean {
  if (ip.v6 !== range.v6) return false;
  const shift = BigInt((ip.v6 ? 128 : 32) - range.prefix);
  return ip.value >> shift === range.value >> shift;
}

/** The first four groups of an IPv6 address (its /64), as "2001:db8:1:2::/64". */
export function sixtyFourOf(ip: IpAddress): string {
  const groups: string[] = [];
  for (let i = 7; i >= 4; i--) groups.push(((ip.value >> BigInt(16 * i)) & 0xffffn).toString(16));
  return `${groups.join(":")}::/64`;
}

/** An IPv4 address in dotted form. */
export function dottedOf(ip: IpAddress): string {
  return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join(".");
}
