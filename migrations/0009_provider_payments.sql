-- Top-ups paid through a real provider (docs/DECISIONS.md "Payments"). A top-up is
-- credited only by a payment event the provider vouches for (a signed webhook; the
-- sandbox's own approval outside production), each event acted on once.
--
-- takes_money: the provider took real money for it. Only such top-ups are ever paid
-- back (refunded_krw of amount_krw); sandbox top-ups (all rows before this migration)
-- and operator credit are credit, never money.
ALTER TABLE topups ADD COLUMN takes_money boolean NOT NULL DEFAULT false;
-- Where the customer pays (the provider's hosted page), kept to link it again.
ALTER TABLE topups ADD COLUMN pay_url text;
-- The provider's reference of the money itself (Stripe: the PaymentIntent), for refunds.
ALTER TABLE topups ADD COLUMN payment_ref text;
ALTER TABLE topups ADD COLUMN refunded_krw bigint NOT NULL DEFAULT 0 CHECK (refunded_krw >= 0);
ALTER TABLE topups ADD CONSTRAINT topups_refund_within_amount CHECK (refunded_krw <= amount_krw);
-- Why a top-up failed (declined, expired, an amount that did not match the order).
ALTER TABLE topups ADD COLUMN failure text;
CREATE UNIQUE INDEX topups_provider_ref ON topups (provider, provider_ref);

-- Every provider event acted on, by the provider's own event ID: a replayed event
-- (an attacker's, or the provider's retry of one already done) finds its row and
-- changes nothing. Written in the same transaction as what the event did.
CREATE TABLE payment_events (
  provider    text NOT NULL,
  event_id    text NOT NULL,
  event_type  text NOT NULL,
  topup_id    text,
  outcome     text NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (provider, event_id)
);
