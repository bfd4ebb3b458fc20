// The per-IP limits' notion of "one client": the last X-Forwarded-For entry behind our
// proxy, and an IPv6 address's /64.
import assert from "node:assert/strict";
import { test } from "node:test";
import { clientAddress, limitKey } from "../../src/http/client-address.ts";

test("without TRUST_PROXY the socket address wins, whatever the header says", () => {
  assert.equal(clientAddress("1.2.3.4", false, "9.9.9.9"), "9.9.9.9");
  assert.equal(clientAddress(undefined, false, undefined), "unknown");
});

test("with TRUST_PROXY the last entry wins: earlier ones are the client's own writing", () => {
  assert.equal(clientAddress("6.6.6.6, 7.7.7.7,  5.5.5.5 ", true, "10.0.0.1"), "5.5.5.5");
  assert.equal(clientAddress("5.5.5.5", true, "10.0.0.1"), "5.5.5.5");
  assert.equal(clientAddress(" , ", true, "10.0.0.1"), "10.0.0.1");
});

test("IPv6 addresses count by /64; IPv4 and IPv4-mapped count by address", () => {
  assert.equal(limitKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  assert.equal(limitKey("2001:0db8:0001:0002::1"), "2001:db8:1:2::/64");
  assert.equal(limitKey("[2001:db8::1%eth0]"), "2001:db8:0:0::/64");
  assert.equal(limitKey("::1"), "0:0:0:0::/64");
  assert.equal(limitKey("::ffff:192.0.2.7"), "192.0.2.7");
  assert.equal(limitKey("192.0.2.7"), "192.0.2.7");
  assert.notEqual(limitKey("2001:db8:1:2::1"), limitKey("2001:db8:1:3::1"));
  // Not an address: kept as given rather than merged with anything else.
  assert.equal(limitKey("not:an:address:zz::"), "not:an:address:zz::");
});
