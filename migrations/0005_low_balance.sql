-- Low-balance e-mail: the owner's threshold (null: off) and whether the
-- one e-mail for the current dip below it has gone out. A capture that leaves the
-- balance below the threshold claims the flag (one UPDATE, so concurrent captures
-- send one e-mail); a credit that lifts the balance to the threshold or above, or a
-- new threshold, clears it.
ALTER TABLE organizations ADD COLUMN low_balance_threshold_krw bigint CHECK (low_balance_threshold_krw BETWEEN 0 AND 100000000);
ALTER TABLE organizations ADD COLUMN low_balance_notified boolean NOT NULL DEFAULT false;
