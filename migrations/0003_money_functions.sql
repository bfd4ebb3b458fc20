-- The three money steps of a paid request (reserve, capture, release) as functions,
-- so each is one statement and one round trip instead of a transaction of 8-9. The
-- load run (docs/RELIABILITY.md) found those round trips, not the SQL work, to be
-- the paid path's cost. The logic is the one src/billing described step by step
-- before, unchanged: the org row is locked first and the hold row second (the same
-- order everywhere, so concurrent calls on one org queue instead of deadlocking);
-- spending counters change only under that org lock; a hold ends once.
-- Times and the KST day/month come from the application's clock, never now().

-- Returns 'ok' or why not: org_not_found, hold_mismatch, hold_released,
-- refund_pending, insufficient_credits, app_not_found, org_daily_limit,
-- app_daily_limit, app_monthly_limit. A repeated request ID (a gateway resend) with
-- the same org, app and amount answers 'ok' and adds nothing.
CREATE FUNCTION pd_reserve_hold(
  p_request_id text, p_org_id text, p_app_id text, p_amount bigint,
  p_now timestamptz, p_expires timestamptz, p_day text, p_month text
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  o record;
  h record;
  a record;
  org_day bigint;
  app_day bigint;
  app_month bigint;
BEGIN
  SELECT balance_krw, held_krw, daily_limit_krw, refund_pending INTO o
    FROM organizations WHERE org_id = p_org_id FOR UPDATE;
  IF NOT FOUND THEN RETURN 'org_not_found'; END IF;

  -- Looked up after taking the org lock, so two copies of one request cannot both insert.
  SELECT org_id, app_id, amount_krw, state INTO h FROM holds WHERE request_id = p_request_id;
  IF FOUND THEN
    IF h.org_id <> p_org_id OR h.app_id <> p_app_id OR h.amount_krw <> p_amount THEN RETURN 'hold_mismatch'; END IF;
    IF h.state = 'released' THEN RETURN 'hold_released'; END IF;
    RETURN 'ok';
  END IF;

  IF o.refund_pending THEN RETURN 'refund_pending'; END IF;
  IF o.balance_krw - o.held_krw < p_amount THEN RETURN 'insufficient_credits'; END IF;

  SELECT org_id, daily_limit_krw, monthly_limit_krw INTO a FROM apps WHERE app_id = p_app_id;
  IF NOT FOUND OR a.org_id <> p_org_id THEN RETURN 'app_not_found'; END IF;

  SELECT coalesce(sum(krw) FILTER (WHERE scope_id = p_org_id AND period = p_day), 0),
         coalesce(sum(krw) FILTER (WHERE scope_id = p_app_id AND period = p_day), 0),
         coalesce(sum(krw) FILTER (WHERE scope_id = p_app_id AND period = p_month), 0)
    INTO org_day, app_day, app_month
    FROM spend_counters
   WHERE (scope_id = p_org_id AND period = p_day) OR (scope_id = p_app_id AND period IN (p_day, p_month));
  IF org_day + p_amount > o.daily_limit_krw THEN RETURN 'org_daily_limit'; END IF;
  IF a.daily_limit_krw IS NOT NULL AND app_day + p_amount > a.daily_limit_krw THEN RETURN 'app_daily_limit'; END IF;
  IF a.monthly_limit_krw IS NOT NULL AND app_month + p_amount > a.monthly_limit_krw THEN RETURN 'app_monthly_limit'; END IF;

  INSERT INTO holds (request_id, org_id, app_id, amount_krw, state, created_at, expires_at, kst_day, kst_month)
  VALUES (p_request_id, p_org_id, p_app_id, p_amount, 'open', p_now, p_expires, p_day, p_month);
  UPDATE organizations SET held_krw = held_krw + p_amount WHERE org_id = p_org_id;
  INSERT INTO spend_counters (scope_id, period, krw)
  VALUES (p_org_id, p_day, p_amount), (p_app_id, p_day, p_amount), (p_app_id, p_month, p_amount)
  ON CONFLICT (scope_id, period) DO UPDATE SET krw = spend_counters.krw + EXCLUDED.krw;
  RETURN 'ok';
END $$;

-- Charges min(p_amount, reserved). outcome: 'ok', 'again' (captured before: the first
-- capture's numbers, nothing charged now), 'not_found', 'released'.
CREATE FUNCTION pd_capture_hold(p_request_id text, p_amount bigint, p_now timestamptz)
RETURNS TABLE (outcome text, charged bigint, balance bigint) LANGUAGE plpgsql AS $$
DECLARE
  ref_org text;
  h record;
  v_charged bigint;
  v_balance bigint;
BEGIN
  -- org_id never changes, so reading it before taking the org lock is safe.
  SELECT org_id INTO ref_org FROM holds WHERE request_id = p_request_id;
  IF NOT FOUND THEN RETURN QUERY SELECT 'not_found'::text, NULL::bigint, NULL::bigint; RETURN; END IF;
  PERFORM 1 FROM organizations WHERE org_id = ref_org FOR UPDATE;
  SELECT org_id, app_id, amount_krw, state, kst_day, kst_month INTO h
    FROM holds WHERE request_id = p_request_id FOR UPDATE;
  IF NOT FOUND THEN RETURN QUERY SELECT 'not_found'::text, NULL::bigint, NULL::bigint; RETURN; END IF;
  IF h.state = 'captured' THEN
    RETURN QUERY SELECT 'again'::text, -l.amount_krw, l.balance_after_krw
      FROM ledger_entries l WHERE l.request_id = p_request_id AND l.kind = 'capture';
    RETURN;
  END IF;
  IF h.state = 'released' THEN RETURN QUERY SELECT 'released'::text, NULL::bigint, NULL::bigint; RETURN; END IF;

  -- Never more than reserved: the reservation was the most the caller agreed to pay.
  v_charged := least(p_amount, h.amount_krw);
  UPDATE holds SET state = 'captured', captured_krw = v_charged, settled_at = p_now WHERE request_id = p_request_id;
  UPDATE organizations SET balance_krw = balance_krw - v_charged, held_krw = held_krw - h.amount_krw
   WHERE org_id = h.org_id RETURNING balance_krw INTO v_balance;
  INSERT INTO ledger_entries (org_id, kind, amount_krw, balance_after_krw, request_id, created_at)
  VALUES (h.org_id, 'capture', -v_charged, v_balance, p_request_id, p_now);
  -- The spending counters gave the whole reservation; the part not charged comes back.
  IF h.amount_krw > v_charged THEN
    UPDATE spend_counters SET krw = krw - (h.amount_krw - v_charged)
     WHERE (scope_id = h.org_id AND period = h.kst_day) OR (scope_id = h.app_id AND period IN (h.kst_day, h.kst_month));
  END IF;
  RETURN QUERY SELECT 'ok'::text, v_charged, v_balance;
END $$;

-- Gives an open hold back. Returns 'released', 'none' (no hold, already released, or
-- with p_only_expired_at not yet expired) or 'captured' (refused: a charge stands).
CREATE FUNCTION pd_release_hold(p_request_id text, p_now timestamptz, p_only_expired_at timestamptz)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ref_org text;
  h record;
BEGIN
  SELECT org_id INTO ref_org FROM holds WHERE request_id = p_request_id;
  IF NOT FOUND THEN RETURN 'none'; END IF;
  PERFORM 1 FROM organizations WHERE org_id = ref_org FOR UPDATE;
  SELECT org_id, app_id, amount_krw, state, expires_at, kst_day, kst_month INTO h
    FROM holds WHERE request_id = p_request_id FOR UPDATE;
  IF NOT FOUND THEN RETURN 'none'; END IF;
  IF h.state = 'captured' THEN RETURN 'captured'; END IF;
  IF h.state = 'released' THEN RETURN 'none'; END IF;
  IF p_only_expired_at IS NOT NULL AND h.expires_at > p_only_expired_at THEN RETURN 'none'; END IF;

  UPDATE holds SET state = 'released', settled_at = p_now WHERE request_id = p_request_id;
  UPDATE organizations SET held_krw = held_krw - h.amount_krw WHERE org_id = h.org_id;
  UPDATE spend_counters SET krw = krw - h.amount_krw
   WHERE (scope_id = h.org_id AND period = h.kst_day) OR (scope_id = h.app_id AND period IN (h.kst_day, h.kst_month));
  RETURN 'released';
END $$;
