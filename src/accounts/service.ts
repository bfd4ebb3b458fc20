// The accounts service: users, organizations, apps and the product's sale status,
// gathered behind one factory so src/wiring/services.ts wires a single object.
import type { Db } from "../db/index.ts";
import { createOrgs } from "./orgs.ts";
import { createApps } from "./apps.ts";
import { createProductStatus } from "./product-status.ts";

export interface AccountsDeps {
  db: Db;
  now: () => number;
}

export function createAccounts(deps: AccountsDeps) {
  return { ...createOrgs(deps), ...createApps(deps), ...createProductStatus(deps) };
}

export type Accounts = ReturnType<typeof createAccounts>;
