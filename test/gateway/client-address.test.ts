// The per-IP limits' notion of "one client" (src/http/proxy-trust.ts,
// src/http/client-address.ts): TRUST_PROXY's three forms, what each believes of
// X-Forwarded-For, and an IPv6 address's /64.
import assert from "node:assert/strict";
import { test } from "node:test";
import { clientAddress, limitKey } from "../../src/http/client-address.ts";
import { NO_PROXY, parseProxyTrust, peerIsTrustedProxy, type ProxyTrust } from "../../src/http/proxy-trust.ts";
import { parseConfig } from "../../src/config.ts";

const trust = (text: string): ProxyTrust => {
  const t = parseProxyTrust(text);
  assert.ok(t, text);
  return t;
};

test("without TRUST_PROXY the socket address wins, whatever the header says", () => {
  assert.equal(clientAddress("1.2.3.4", NO_PROXY, "9.9.9.9"), "9.9.9.9");
  assert.equal(clientAddress(undefined, NO_PROXY, undefined), "unknown");
  assert.deepEqual(parseConfig({}).TRUST_PROXY, NO_PROXY, "the default believes no header");
  for (const off of ["false", "0", "no", "FALSE"]) assert.deepEqual(trust(off), NO_PROXY, off);
});

test("one hop (true, 1): the last entry wins; earlier ones are the client's own writing", () => {
  for (const one of ["true", "1", "yes"]) {
    const t = trust(one);
    assert.equal(clientAddress("6.6.6.6, 7.7.7.7,  5.5.5.5 ", t, "10.0.0.1"), "5.5.5.5");
    assert.equal(clientAddress("5.5.5.5", t, "10.0.0.1"), "5.5.5.5");
    assert.equal(clientAddress(" , ", t, "10.0.0.1"), "10.0.0.1");
    assert.equal(clientAddress(undefined, t, "10.0.0.1"), "10.0.0.1");
  }
});

test("n hops: the n-th entry from the right; a shorter header gives its first entry", () => {
  const two = trust("2");
  // client → cloud balancer (appends the client) → ingress (appends the balancer) → us
  assert.equal(clientAddress("6.6.6.6, 203.0.113.5, 10.1.0.9", two, "10.2.0.3"), "203.0.113.5");
  assert.equal(clientAddress("203.0.113.5", two, "10.2.0.3"), "203.0.113.5");
  assert.equal(parseProxyTrust("9"), undefined, "more hops than any real chain: refused");
});

test("proxy ranges: only a listed peer is believed, the first unlisted entry from the right is the client, and with none the rightmost", () => {
  const t = trust("10.0.0.0/8, fd00::/8, 192.0.2.1");
  // The peer is our ingress; the balancer before it is ours too; the spoofed entry before the client is not read.
  assert.equal(clientAddress("6.6.6.6, 203.0.113.5, 10.1.0.9", t, "10.2.0.3"), "203.0.113.5");
  assert.equal(clientAddress("6.6.6.6, 203.0.113.5", t, "::ffff:10.2.0.3"), "203.0.113.5", "a dual-stack socket's IPv4 peer");
  assert.equal(clientAddress("2001:db8:1:2::9", t, "fd00::1"), "2001:db8:1:2::/64");
  assert.equal(clientAddress("6.6.6.6", t, "192.0.2.1"), "6.6.6.6");
  // A peer outside the list reached us directly: its header is its own invention.
  assert.equal(clientAddress("6.6.6.6", t, "198.51.100.4"), "198.51.100.4");
  assert.equal(clientAddress("6.6.6.6", t, undefined), "unknown");
  // Every entry is inside a listed range: the one the peer wrote names the client, never
  // one further left, which a client inside a range wrote as it liked.
  assert.equal(clientAddress("10.9.9.9, 10.1.0.9", t, "10.2.0.3"), "10.1.0.9");
  for (const forged of ["10.66.0.1", "10.66.0.2", "192.0.2.1"]) assert.equal(clientAddress(`${forged}, 10.1.0.9`, t, "10.2.0.3"), "10.1.0.9", forged);
  assert.equal(clientAddress("10.1.0.9", t, "10.2.0.3"), "10.1.0.9");
  assert.equal(peerIsTrustedProxy(t, "10.2.0.3"), true);
  assert.equal(peerIsTrustedProxy(t, "198.51.100.4"), false);
  assert.equal(peerIsTrustedProxy(trust("1"), undefined), true);
  assert.equal(peerIsTrustedProxy(NO_PROXY, "10.2.0.3"), false);
});

test("a TRUST_PROXY that is none of the forms stops the start, naming the variable", () => {
  for (const bad of ["maybe", "10.0.0.0/33", "10.0.0.0/8,", "300.1.1.1", "fd00::/129", "10.0.0.0/8/1"]) {
    assert.throws(() => parseConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, bad);
  }
  assert.deepEqual(parseConfig({ TRUST_PROXY: "2" }).TRUST_PROXY, { kind: "hops", hops: 2 });
});

test("IPv6 addresses count by /64; IPv4 and IPv4-mapped count by address", () => {
  assert.equal(limitKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  assert.equal(limitKey("2001:0db8:0001:0002::1"), "2001:db8:1:2::/64");
  assert.equal(limitKey("[2001:db8::1%eth0]"), "2001:db8:0:0::/64");
  assert.equal(limitKey("[2001:db8::1]:443"), "2001:db8:0:0::/64");
  assert.equal(limitKey("::1"), "0:0:0:0::/64");
  assert.equal(limitKey("::ffff:192.0.2.7"), "192.0.2.7");
  assert.equal(limitKey("192.0.2.7"), "192.0.2.7");
  assert.equal(limitKey("192.0.2.7:5123"), "192.0.2.7", "a proxy that writes the port");
  assert.notEqual(limitKey("2001:db8:1:2::1"), limitKey("2001:db8:1:3::1"));
  // Not an address: kept as given rather than merged with anything else.
  assert.equal(limitKey("not:an:address:zz::"), "not:an:address:zz::");
});
