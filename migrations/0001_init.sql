-- Pixeldrop schema, first version.
-- Conventions: IDs are prefixed random text (usr_, org_, app_, key_, req_); money is
-- whole KRW in bigint; times are timestamptz written from the application's clock.

CREATE TABLE users (
  user_id     text PRIMARY KEY,
  email       text NOT NULL,
  verified_at timestamptz,
  created_at  timestamptz NOT NULL
);
-- One account per address, whatever its letter case.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
  org_id          text PRIMARY KEY,
  owner_user_id   text NOT NULL REFERENCES users (user_id),
  -- balance_krw = credits - captures (+/- operator adjustments), kept by the ledger.
  balance_krw     bigint NOT NULL DEFAULT 0 CHECK (balance_krw >= 0),
  -- Sum of this org's open holds, kept in step with the holds table by the ledger
  -- (always under this row's lock), so "available" needs no scan of holds.
  held_krw        bigint NOT NULL DEFAULT 0 CHECK (held_krw >= 0),
  daily_limit_krw bigint NOT NULL DEFAULT 50000 CHECK (daily_limit_krw BETWEEN 0 AND 1000000),
  refund_pending  boolean NOT NULL DEFAULT false,
  test_quota      text NOT NULL DEFAULT 'monthly' CHECK (test_quota IN ('monthly', 'lifetime')),
  created_at      timestamptz NOT NULL,
  -- Reserve only succeeds when balance - held >= amount, so this always holds.
  CHECK (held_krw <= balance_krw)
);
CREATE INDEX organizations_owner ON organizations (owner_user_id);

CREATE TABLE apps (
  app_id            text PRIMARY KEY,
  org_id            text NOT NULL REFERENCES organizations (org_id),
  name              text NOT NULL,
  product_enabled   boolean NOT NULL DEFAULT false,
  daily_limit_krw   bigint CHECK (daily_limit_krw >= 0),   -- null: no app limit
  monthly_limit_krw bigint CHECK (monthly_limit_krw >= 0), -- null: no app limit
  created_at        timestamptz NOT NULL,
  deleted_at        timestamptz
);
CREATE INDEX apps_org ON apps (org_id);

CREATE TABLE api_keys (
  key_id       text PRIMARY KEY,
  app_id       text NOT NULL REFERENCES apps (app_id),
  kind         text NOT NULL CHECK (kind IN ('test', 'live')),
  -- HMAC-SHA-256(pepper, key text), hex. The key text itself is never stored.
  hash         text NOT NULL UNIQUE,
  prefix       text NOT NULL,  -- "pd_live_" + first 4 random characters, for display
  last4        text NOT NULL,
  created_at   timestamptz NOT NULL,
  last_used_at timestamptz,
  expires_at   timestamptz,    -- set when the key is replaced (reissue grace period)
  deleted_at   timestamptz,
  suspended_at timestamptz,
  -- Deferred so a reissue can point the old key at the new one before inserting it
  -- (the unique index below allows only one current key at a time).
  replaced_by  text REFERENCES api_keys (key_id) DEFERRABLE INITIALLY DEFERRED
);
-- The current key of each kind per app: at most one (old keys in their grace period
-- have replaced_by set, deleted ones deleted_at).
CREATE UNIQUE INDEX api_keys_current ON api_keys (app_id, kind)
  WHERE deleted_at IS NULL AND replaced_by IS NULL;

-- Every change of a balance, as a signed delta: credit > 0, capture < 0, refund < 0
-- (money paid back to the customer), adjust either way. balance_krw = sum(amount_krw).
CREATE TABLE ledger_entries (
  entry_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id     text NOT NULL REFERENCES organizations (org_id),
  kind       text NOT NULL CHECK (kind IN ('credit', 'capture', 'refund', 'adjust')),
  amount_krw bigint NOT NULL,
  -- The org's balance right after this entry (a repeated capture answers with it).
  balance_after_krw bigint NOT NULL CHECK (balance_after_krw >= 0),
  request_id text,
  note       text,
  created_at timestamptz NOT NULL,
  CHECK (
    (kind = 'credit' AND amount_krw > 0)
    OR (kind = 'capture' AND amount_krw < 0 AND request_id IS NOT NULL)
    OR (kind = 'refund' AND amount_krw < 0)
    OR (kind = 'adjust' AND amount_krw <> 0)
  )
);
-- A request is charged at most once, whatever happens above.
CREATE UNIQUE INDEX ledger_one_capture_per_request ON ledger_entries (request_id) WHERE kind = 'capture';
CREATE INDEX ledger_org_time ON ledger_entries (org_id, created_at);

-- One hold per request: reserved before processing, then captured or released once.
CREATE TABLE holds (
  request_id   text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations (org_id),
  app_id       text NOT NULL REFERENCES apps (app_id),
  amount_krw   bigint NOT NULL CHECK (amount_krw > 0),
  state        text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'captured', 'released')),
  captured_krw bigint CHECK (captured_krw > 0 AND captured_krw <= amount_krw),
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  settled_at   timestamptz,
  -- The KST day and month the hold counts towards for spending limits.
  kst_day      text NOT NULL,
  kst_month    text NOT NULL,
  CHECK ((state = 'open') = (settled_at IS NULL)),
  CHECK ((state = 'captured') = (captured_krw IS NOT NULL))
);
-- The sweeper looks for open holds past their expiry; settled holds are not indexed.
CREATE INDEX holds_open_expiry ON holds (expires_at) WHERE state = 'open';
CREATE INDEX holds_org_time ON holds (org_id, created_at);

-- Spending counters so a reserve need not sum history. One row per scope and period:
--   (org_…, 'YYYY-MM-DD')  organization daily spend
--   (app_…, 'YYYY-MM-DD')  app daily spend
--   (app_…, 'YYYY-MM')     app monthly spend
-- krw = open holds + captured amounts of holds reserved in that KST period. A reserve
-- adds the hold amount; a capture gives back (reserved - charged); a release gives
-- back the whole amount, always to the hold's own period. Every change is made while
-- holding the organization row's lock (SELECT … FOR UPDATE), so the check against
-- the limit and the increment cannot interleave with another request of the org.
CREATE TABLE spend_counters (
  scope_id text NOT NULL,
  period   text NOT NULL,
  krw      bigint NOT NULL DEFAULT 0 CHECK (krw >= 0),
  PRIMARY KEY (scope_id, period)
);

-- One row per request that reached the gateway; the final state overwrites earlier ones.
CREATE TABLE request_log (
  request_id    text PRIMARY KEY,
  received_at   timestamptz NOT NULL,
  kst_day       text NOT NULL,
  org_id        text,
  app_id        text,
  key_id        text,
  key_kind      text CHECK (key_kind IN ('test', 'live')),
  tier          text,
  status        integer NOT NULL,
  error_code    text,
  charged_krw   bigint NOT NULL DEFAULT 0 CHECK (charged_krw >= 0),
  processing_ms integer,
  attempts      integer NOT NULL DEFAULT 1,
  ip            text,
  width         integer,
  height        integer
);
CREATE INDEX request_log_org_time ON request_log (org_id, received_at DESC);
CREATE INDEX request_log_org_day ON request_log (org_id, kst_day);

-- Free test calls used: period 'YYYY-MM' (KST month) and 'lifetime' (every call ever),
-- both counted on each call so an operator can switch an org to the lifetime quota.
CREATE TABLE test_usage (
  org_id text NOT NULL REFERENCES organizations (org_id),
  period text NOT NULL,
  count  integer NOT NULL DEFAULT 0 CHECK (count >= 0),
  PRIMARY KEY (org_id, period)
);

-- Whether the product is on sale: a single row.
CREATE TABLE product_status (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  status     text NOT NULL CHECK (status IN ('available', 'discontinued', 'maintenance')),
  updated_at timestamptz NOT NULL
);
INSERT INTO product_status (singleton, status, updated_at) VALUES (true, 'available', now());

-- Small named values the service generates once and keeps (e.g. the key pepper).
CREATE TABLE settings (
  key   text PRIMARY KEY,
  value text NOT NULL
);
