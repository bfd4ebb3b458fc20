-- What a call took before the product ran, besides its hold, by request ID: its
-- Idempotency-Key claim and its free test call. A statement that fails with a store
-- error has an unknown outcome (it may have committed, or may still commit), so the
-- call's give-back marks the request ID 'given_back' first: whichever order the two
-- statements meet in, a claim or free call of that request ID ends up taking nothing.
-- Rows are purged with the Idempotency-Keys, after the keys' 24 hours.
CREATE TABLE call_takes (
  request_id  text NOT NULL,
  what        text NOT NULL CHECK (what IN ('idempotency_key', 'free_call')),
  state       text NOT NULL CHECK (state IN ('taken', 'given_back')),
  -- A free call: the org and the KST month its counters were raised in.
  org_id      text,
  period      text,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (request_id, what)
);
CREATE INDEX call_takes_created ON call_takes (created_at);

-- As in 0004, and first: a request ID whose claim was given back claims nothing
-- ('given_back'); otherwise the claim is recorded as taken by it.
CREATE OR REPLACE FUNCTION pd_idempotency_claim(
  p_app_id text, p_key text, p_fingerprint text, p_request_id text,
  p_now timestamptz, p_lease_until timestamptz, p_expires timestamptz
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r record;
  hold_state text;
BEGIN
  INSERT INTO call_takes (request_id, what, state, created_at)
  VALUES (p_request_id, 'idempotency_key', 'taken', p_now)
  ON CONFLICT (request_id, what) DO NOTHING;
  IF NOT FOUND AND EXISTS (
    SELECT 1 FROM call_takes WHERE request_id = p_request_id AND what = 'idempotency_key' AND state = 'given_back'
  ) THEN
    RETURN 'given_back';
  END IF;

  LOOP
    INSERT INTO idempotency_keys (app_id, idem_key, fingerprint, request_id, lease_until, created_at, expires_at)
    VALUES (p_app_id, p_key, p_fingerprint, p_request_id, p_lease_until, p_now, p_expires)
    ON CONFLICT (app_id, idem_key) DO NOTHING;
    IF FOUND THEN RETURN 'fresh'; END IF;

    SELECT * INTO r FROM idempotency_keys WHERE app_id = p_app_id AND idem_key = p_key FOR UPDATE;
    CONTINUE WHEN NOT FOUND;

    IF r.expires_at <= p_now THEN
      UPDATE idempotency_keys
         SET fingerprint = p_fingerprint, request_id = p_request_id, completed_at = NULL,
             lease_until = p_lease_until, created_at = p_now, expires_at = p_expires
       WHERE app_id = p_app_id AND idem_key = p_key;
      RETURN 'fresh';
    END IF;
    IF r.fingerprint <> p_fingerprint THEN RETURN 'mismatch'; END IF;
    IF r.completed_at IS NOT NULL THEN RETURN 'replay'; END IF;

    SELECT state INTO hold_state FROM holds WHERE request_id = r.request_id;
    IF hold_state = 'captured' THEN
      UPDATE idempotency_keys SET completed_at = p_now WHERE app_id = p_app_id AND idem_key = p_key;
      RETURN 'replay';
    END IF;
    IF r.lease_until > p_now OR hold_state = 'open' THEN RETURN 'in_use'; END IF;

    UPDATE idempotency_keys SET request_id = p_request_id, lease_until = p_lease_until
     WHERE app_id = p_app_id AND idem_key = p_key;
    RETURN 'fresh';
  END LOOP;
END $$;
