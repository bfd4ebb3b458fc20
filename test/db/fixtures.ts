// Small builders for tests of billing, keys and accounts: each call makes a new
// user, org and app with random IDs, so tests sharing a database never collide.
import type { Db } from "../../src/db/index.ts";
import { randomBase62 } from "../../src/db/index.ts";
import { createAccounts } from "../../src/accounts/index.ts";
import { createBilling } from "../../src/billing/index.ts";

export function uniqueEmail(): string {
  return `t${randomBase62(12).toLowerCase()}@example.test`;
}

export interface OrgFixture {
  orgId: string;
  userId: string;
  appId: string;
}

/** A new org (owner verified unless told otherwise) with one app, and `creditKrw` on it. */
export async function makeOrg(
  db: Db,
  now: () => number,
  opts: { creditKrw?: number; verified?: boolean; dailyLimitKrw?: number } = {},
): Promise<OrgFixture> {
  const accounts = createAccounts({ db, now });
  const created = await accounts.createOrgWithOwner(uniqueEmail(), { verified: opts.verified ?? true });
  if (!created.ok) throw new Error(`fixture: ${created.code}`);
  const app = await accounts.createApp(created.orgId, { name: "fixture app", productEnabled: true });
  if (!app.ok) throw new Error(`fixture: ${app.code}`);
  if (opts.dailyLimitKrw !== undefined) {
    const r = await accounts.updateOrg(created.orgId, { dailyLimitKrw: opts.dailyLimitKrw });
    if (!r.ok) throw new Error(`fixture: ${r.code}`);
  }
  if (opts.creditKrw) {
    const c = await createBilling({ db, now, holdTtlMs: 1 }).credit(created.orgId, opts.creditKrw, "fixture");
    if (!c.ok) throw new Error(`fixture: ${c.code}`);
  }
  return { orgId: created.orgId, userId: created.userId, appId: app.appId };
}

let seq = 0;
/** A request ID unique within the process (the format the gateway uses is not needed here). */
export function reqId(): string {
  seq += 1;
  return `req_t${seq.toString(36)}${randomBase62(12).toLowerCase()}`;
}
