-- Customer console: sessions, one-time e-mail links, the mail outbox and its rate
-- log, the product application ("apply for use") on apps, and top-ups.

-- Which product an app uses (only background removal exists today) and when the
-- customer applied for it. product_enabled (0001) stays the operator's switch:
-- applied but not enabled = "in review".
ALTER TABLE apps ADD COLUMN product text NOT NULL DEFAULT 'removebg';
ALTER TABLE apps ADD COLUMN review_requested_at timestamptz;

-- A signed-in browser. Only a SHA-256 of the cookie value is stored, so a copy of
-- this table cannot be replayed as cookies.
CREATE TABLE console_sessions (
  session_hash text PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users (user_id),
  org_id       text NOT NULL REFERENCES organizations (org_id),
  -- Sent back in every form; compared with the posted value (synchronizer token).
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

-- One-time links mailed for sign-up (verification) and sign-in. Hash only, single
-- use (used_at), short expiry.
CREATE TABLE console_login_tokens (
  token_hash text PRIMARY KEY,
  purpose    text NOT NULL CHECK (purpose IN ('signup', 'signin')),
  email      text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

-- Mail written when no SMTP server is configured: the developer mailbox and the
-- tests read it.
CREATE TABLE mail_outbox (
  mail_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  to_address text NOT NULL,
  subject    text NOT NULL,
  body_text  text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX mail_outbox_to ON mail_outbox (lower(to_address), mail_id DESC);

-- Sign-up and sign-in mails sent, per address and per client IP, for rate limits.
CREATE TABLE console_mail_attempts (
  scope      text NOT NULL, -- 'email:<lower address>' or 'ip:<address>'
  created_at timestamptz NOT NULL
);
CREATE INDEX console_mail_attempts_scope ON console_mail_attempts (scope, created_at);

-- Top-ups through a payment provider: created pending, confirmed once (then the
-- ledger gets its credit entry), or abandoned.
CREATE TABLE topups (
  topup_id     text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations (org_id),
  amount_krw   bigint NOT NULL CHECK (amount_krw > 0),
  provider     text NOT NULL,
  provider_ref text NOT NULL,
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'confirming', 'confirmed', 'failed')),
  created_at   timestamptz NOT NULL,
  confirmed_at timestamptz
);
CREATE INDEX topups_org ON topups (org_id, created_at DESC);
