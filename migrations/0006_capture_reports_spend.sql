-- The capture also reports the spending counters after it: X-RateLimit-* on a
-- live key's answer needs the org's daily and the app's daily and monthly spend, which
-- a statement of their own read after every paid call. This function runs the capture
-- of migrations/0003 unchanged and then reads the three counters in the same statement,
-- still under the org lock the capture took, for the KST day and month the caller names
-- (the application's clock at the capture, as the separate read used). The counters
-- come only with 'ok' and 'again'; a capture that charged nothing reports none.
CREATE FUNCTION pd_capture_hold_with_spend(p_request_id text, p_amount bigint, p_now timestamptz, p_day text, p_month text)
RETURNS TABLE (outcome text, charged bigint, balance bigint, org_day bigint, app_day bigint, app_month bigint)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
  h record;
BEGIN
  SELECT * INTO c FROM pd_capture_hold(p_request_id, p_amount, p_now);
  IF c.outcome IS NULL OR c.outcome NOT IN ('ok', 'again') THEN
    RETURN QUERY SELECT c.outcome, c.charged, c.balance, NULL::bigint, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  SELECT org_id, app_id INTO h FROM holds WHERE request_id = p_request_id;
  RETURN QUERY
    SELECT c.outcome, c.charged, c.balance,
           coalesce(sum(s.krw) FILTER (WHERE s.scope_id = h.org_id AND s.period = p_day), 0)::bigint,
           coalesce(sum(s.krw) FILTER (WHERE s.scope_id = h.app_id AND s.period = p_day), 0)::bigint,
           coalesce(sum(s.krw) FILTER (WHERE s.scope_id = h.app_id AND s.period = p_month), 0)::bigint
      FROM spend_counters s
     WHERE (s.scope_id = h.org_id AND s.period = p_day) OR (s.scope_id = h.app_id AND s.period IN (p_day, p_month));
END $$;
