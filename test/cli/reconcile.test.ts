// `pixeldrop reconcile`: what it refuses before calling the service, and what it makes of
// the service's refusals and silence. Its table and JSON from a real service are in
// test/payments/provider-money.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reconcileCommand } from "../../src/cli/reconcile-command.ts";

async function run(argv: string[], env: Record<string, string> = { PD_OPERATOR_TOKEN: "t".repeat(40) }, answer?: () => Promise<Response>) {
  const out: string[] = [];
  const err: string[] = [];
  const asked: { url: string; auth: string | null }[] = [];
  const fetchFn = (async (url: string, init?: RequestInit) => {
    asked.push({ url, auth: new Headers(init?.headers).get("authorization") });
    if (!answer) throw new Error("connect ECONNREFUSED");
    return answer();
  }) as typeof fetch;
  const code = await reconcileCommand(argv, (s) => out.push(s), (s) => err.push(s), env, fetchFn);
  return { code, out: out.join("\n"), err: err.join("\n"), asked };
}

test("usage errors exit 2 before any request: no range, no operator token, a base URL that is not http(s)", async () => {
  for (const [argv, env, why] of [
    [["--from", "2025-05-01"], undefined, /--from and --to are required/],
    [["--from", "2025-05-01", "--to", "2025-05-02"], {}, /PD_OPERATOR_TOKEN/],
    [["--from", "2025-05-01", "--to", "2025-05-02", "--base-url", "ftp://x"], undefined, /--base-url/],
    [["--from", "2025-05-01", "--to", "2025-05-02", "--operator-token", "x"], undefined, /Unknown option/],
  ] as const) {
    const r = await run([...argv], env);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, why);
    assert.equal(r.asked.length, 0);
  }
  assert.equal((await run(["--help"])).code, 0);
});

test("the service's refusal and its silence exit 2 with what it said; the token goes as a bearer token, the range as the query", async () => {
  const refused = await run(["--from", "2025-05-01", "--to", "2025-07-01", "--base-url", "https://ops.example/"], undefined, async () =>
    Response.json({ errors: [{ title: "A reconciliation covers at most 31 days: ask for a shorter range", code: "invalid_parameter" }] }, { status: 400 }),
  );
  assert.equal(refused.code, 2);
  assert.match(refused.err, /400 invalid_parameter: A reconciliation covers at most 31 days/);
  assert.deepEqual(refused.asked, [{ url: "https://ops.example/admin/v1/reconciliation?from=2025-05-01&to=2025-07-01", auth: `Bearer ${"t".repeat(40)}` }]);
  const silent = await run(["--from", "2025-05-01", "--to", "2025-05-02"]);
  assert.equal(silent.code, 2);
  assert.match(silent.err, /did not answer: connect ECONNREFUSED/);
});
