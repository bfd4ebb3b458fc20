-- An Idempotency-Key's result is sent again a bounded number of times (docs/DECISIONS.md
-- "Idempotency-Key", src/billing/idempotency.ts): replays counts the answered replays of
-- the request that owns the key, replays_of names that request. A key that starts a new
-- life (past its 24 hours) or is taken over gets a new owner, so its old count no longer
-- applies, with no write on the paid path to reset it.
ALTER TABLE idempotency_keys ADD COLUMN replays integer NOT NULL DEFAULT 0 CHECK (replays >= 0);
ALTER TABLE idempotency_keys ADD COLUMN replays_of text;
