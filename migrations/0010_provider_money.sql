-- Every movement of money the payment provider reports reaches the ledger
-- (docs/DECISIONS.md "Payments"): a dispute (chargeback) takes the disputed credit off
-- at once and a dispute won gives it back; a refund is taken off when asked and given
-- back if the provider says it failed; a refund made in the provider's dashboard is
-- taken off too. The provider has moved that money already, so such an entry is made
-- whatever the balance: the balance may fall below zero and below what open holds
-- reserved (the reserve's own check, balance - held >= price, then refuses paid calls
-- with 402 insufficient_credits). Our own refunds and the operator's adjustments still
-- stop at the open holds (src/billing/ledger.ts).
ALTER TABLE organizations DROP CONSTRAINT organizations_balance_krw_check;
ALTER TABLE organizations DROP CONSTRAINT organizations_check;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_balance_after_krw_check;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_check;
-- refund_returned: a refund the provider failed or canceled, back on the balance;
-- dispute: disputed credit withheld; dispute_returned: a dispute won, given back.
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_sign CHECK (
     (kind = 'credit' AND amount_krw > 0)
  OR (kind = 'capture' AND amount_krw < 0 AND request_id IS NOT NULL)
  OR (kind = 'refund' AND amount_krw < 0)
  OR (kind = 'refund_returned' AND amount_krw > 0)
  OR (kind = 'dispute' AND amount_krw < 0)
  OR (kind = 'dispute_returned' AND amount_krw > 0)
  OR (kind = 'adjust' AND amount_krw <> 0)
);
-- Which movement of money an entry is: the top-up it credits, the refund (refunds.refund_id)
-- or the dispute (the provider's ID) it takes off or gives back. One entry per kind and
-- movement, however often and in whatever order the provider reports it; and what the
-- reconciliation (src/payments/reconciliation.ts) matches against the provider's records.
ALTER TABLE ledger_entries ADD COLUMN money_ref text;
CREATE UNIQUE INDEX ledger_one_entry_per_movement ON ledger_entries (kind, money_ref) WHERE money_ref IS NOT NULL;
-- The reconciliation reads the movements of a time range, never the captures.
CREATE INDEX ledger_movements_time ON ledger_entries (created_at) WHERE money_ref IS NOT NULL;
-- Credits of top-ups made before this migration name their top-up in the note.
UPDATE ledger_entries SET money_ref = substring(note FROM '^top-up (top_[0-9A-Za-z]+) ')
 WHERE kind = 'credit' AND note ~ '^top-up top_[0-9A-Za-z]+ ';

-- A refund, one row per refund at the provider: ours (asked by the operator) or one made
-- outside our API. Ours is written, with its ledger entry, before the provider is called
-- ('requested'), so a completion asked again after any time finds it and looks it up at
-- the provider instead of paying again. pending / succeeded: the provider's word;
-- failed / canceled: the money is back on the balance (its refund_returned entry).
CREATE TABLE refunds (
  refund_id    text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations (org_id),
  topup_id     text NOT NULL REFERENCES topups (topup_id),
  amount_krw   bigint NOT NULL CHECK (amount_krw > 0),
  origin       text NOT NULL CHECK (origin IN ('operator', 'provider')),
  state        text NOT NULL CHECK (state IN ('requested', 'pending', 'succeeded', 'failed', 'canceled')),
  -- The provider's refund (Stripe: re_…), once it is known.
  provider_ref text,
  failure      text,
  created_at   timestamptz NOT NULL,
  -- When the provider was last asked to make it (ours only).
  sent_at      timestamptz,
  -- Ours: when the completion that made it ended (refund_pending lifted). Until then it
  -- counts towards that completion's amount when the completion is asked again.
  completed_at timestamptz,
  updated_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX refunds_provider_ref ON refunds (provider_ref) WHERE provider_ref IS NOT NULL;
CREATE INDEX refunds_topup ON refunds (topup_id);
CREATE INDEX refunds_created ON refunds (created_at);
CREATE INDEX refunds_in_flight ON refunds (org_id) WHERE state = 'requested';

-- Refunds paid before this migration: their entries name the top-up and the provider's
-- refund in the note ("… (top_…, re_…)"); recorded here as paid, so the provider's later
-- reports of them (a charge.refunded listing them) find them and take nothing twice.
INSERT INTO refunds (refund_id, org_id, topup_id, amount_krw, origin, state, provider_ref, created_at, sent_at, completed_at, updated_at)
SELECT 'rfd_e' || l.entry_id, l.org_id, m[1], -l.amount_krw, 'operator', 'succeeded', m[2], l.created_at, l.created_at, l.created_at, l.created_at
  FROM ledger_entries l, regexp_match(l.note, '\((top_[0-9A-Za-z]+), ([a-z]+_[0-9A-Za-z]+)\)$') AS m
 WHERE l.kind = 'refund' AND m IS NOT NULL AND EXISTS (SELECT 1 FROM topups t WHERE t.topup_id = m[1]);
UPDATE ledger_entries l SET money_ref = 'rfd_e' || l.entry_id
 WHERE l.kind = 'refund' AND EXISTS (SELECT 1 FROM refunds r WHERE r.refund_id = 'rfd_e' || l.entry_id);

-- A dispute of a top-up's payment, by the provider's ID, with its latest status.
CREATE TABLE disputes (
  dispute_ref text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations (org_id),
  topup_id    text NOT NULL REFERENCES topups (topup_id),
  amount_krw  bigint NOT NULL CHECK (amount_krw > 0),
  status      text NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX disputes_topup ON disputes (topup_id);
CREATE INDEX disputes_created ON disputes (created_at);

-- 'opening': a top-up counted against the open-top-up cap before the provider is asked
-- to open its payment (src/payments/topups.ts start); it becomes 'pending' with the
-- provider's reference, or is deleted when the provider refuses.
ALTER TABLE topups DROP CONSTRAINT topups_state_check;
ALTER TABLE topups ADD CONSTRAINT topups_state_check CHECK (state IN ('opening', 'pending', 'confirming', 'confirmed', 'failed'));
CREATE INDEX topups_payment_ref ON topups (provider, payment_ref) WHERE payment_ref IS NOT NULL;
CREATE INDEX topups_confirmed ON topups (confirmed_at) WHERE takes_money;
