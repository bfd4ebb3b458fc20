// What the console is built from (passed in by src/wiring) and the console's own
// stores, made from the same database and clock.
import type { Accounts } from "../accounts/index.ts";
import type { Billing, RequestLog, TestQuota } from "../billing/index.ts";
import type { Db } from "../db/index.ts";
import type { Playground } from "../gateway/playground.ts";
import type { KeyService } from "../keys/index.ts";
import type { Mailer } from "../mail/index.ts";
import type { ProxyTrust } from "../http/proxy-trust.ts";
import type { Topups } from "../payments/index.ts";
import { createAccountFlow, type AccountFlow } from "./account-flow.ts";
import { createAppReview, type AppReview } from "../accounts/index.ts";
import { createLoginLinks, LINK_TTL_MS, type LoginLinks } from "./login-links.ts";
import { createMailRate, DEFAULT_MAIL_LIMITS, type MailRateLimits } from "./mail-rate.ts";
import { createSessions, type Sessions } from "./sessions.ts";
import { tokenHasher } from "./tokens.ts";
import { createUsage, type Usage } from "./usage.ts";

export interface ConsoleDeps {
  db: Db;
  now: () => number;
  accounts: Accounts;
  billing: Billing;
  keys: KeyService;
  requestLog: RequestLog;
  testQuota: TestQuota;
  mailer: Mailer;
  /** Top-ups through the configured payment provider (none configured: not offered). */
  topups: Topups;
  /** PUBLIC_URL: the base of every link (http.tsx baseUrl), never a request header. */
  publicUrl: string;
  sessionSecret?: string;
  /** The developer mailbox page (development on loopback with the outbox mailer only). */
  devMailbox: boolean;
  trustProxy: ProxyTrust;
  remoteAddress: (req: Request, env: unknown) => string | undefined;
  log: (e: Record<string, unknown>) => void;
  mailLimits?: MailRateLimits;
  linkTtlMs?: number;
  /** Runs a playground image through the gateway as the app's test key (absent: the playground answers 503). */
  playground?: Playground;
}

export interface ConsoleStores {
  sessions: Sessions;
  links: LoginLinks;
  flow: AccountFlow;
  review: AppReview;
  usage: Usage;
}

export function buildStores(d: ConsoleDeps): ConsoleStores {
  const hash = tokenHasher(d.sessionSecret);
  const links = createLoginLinks({ db: d.db, now: d.now, hash, ttlMs: d.linkTtlMs ?? LINK_TTL_MS });
  const mailRate = createMailRate({ db: d.db, now: d.now, limits: d.mailLimits ?? DEFAULT_MAIL_LIMITS });
  return {
    sessions: createSessions({ db: d.db, now: d.now, hash }),
    links,
    flow: createAccountFlow({ accounts: d.accounts, links, mailRate, mailer: d.mailer, log: d.log }),
    review: createAppReview({ db: d.db, now: d.now }),
    usage: createUsage({ db: d.db, now: d.now }),
  };
}
