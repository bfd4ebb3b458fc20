-- Idempotency-Key on POST /v1.0/removebg (docs/DECISIONS.md "Idempotency-Key"): one row
-- per (app, key) for 24 hours. The row names the attempt that owns the key (its
-- request ID, which is also its hold's ID) and what "the same request" is (a
-- fingerprint of the form: image bytes by hash and every parameter).
CREATE TABLE idempotency_keys (
  app_id        text NOT NULL REFERENCES apps (app_id),
  idem_key      text NOT NULL,
  fingerprint   text NOT NULL,
  -- The attempt that owns the key; replaced when a dead attempt is taken over.
  request_id    text NOT NULL,
  -- Set when the owning attempt delivered its result. For a live key the captured
  -- hold says the same (a completion write that failed is read from the hold).
  completed_at  timestamptz,
  -- The owning attempt ends by its deadline; after this, an unfinished row whose
  -- hold is not open belongs to an attempt that died and may be taken over.
  lease_until   timestamptz NOT NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (app_id, idem_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Claims a key for an attempt. outcome:
--   'fresh'     the attempt owns the key and runs as a first request;
--   'replay'    the key's request already succeeded: answer again, charge nothing;
--   'mismatch'  the key was used for a different request (422);
--   'in_use'    the owning attempt is still running or its charge is not settled (409).
-- Serialised per key by the row lock (or the primary key for two first inserts).
CREATE FUNCTION pd_idempotency_claim(
  p_app_id text, p_key text, p_fingerprint text, p_request_id text,
  p_now timestamptz, p_lease_until timestamptz, p_expires timestamptz
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r record;
  hold_state text;
BEGIN
  LOOP
    INSERT INTO idempotency_keys (app_id, idem_key, fingerprint, request_id, lease_until, created_at, expires_at)
    VALUES (p_app_id, p_key, p_fingerprint, p_request_id, p_lease_until, p_now, p_expires)
    ON CONFLICT (app_id, idem_key) DO NOTHING;
    IF FOUND THEN RETURN 'fresh'; END IF;

    SELECT * INTO r FROM idempotency_keys WHERE app_id = p_app_id AND idem_key = p_key FOR UPDATE;
    -- Deleted between the insert and the lock (its attempt failed): insert again.
    CONTINUE WHEN NOT FOUND;

    IF r.expires_at <= p_now THEN
      -- Past its 24 hours: the key starts a new life.
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
      -- Charged, but the completion write was lost (store outage): it is a success.
      UPDATE idempotency_keys SET completed_at = p_now WHERE app_id = p_app_id AND idem_key = p_key;
      RETURN 'replay';
    END IF;
    -- Still running, or its hold is open (a capture may still come from a reconciler).
    IF r.lease_until > p_now OR hold_state = 'open' THEN RETURN 'in_use'; END IF;

    -- The owner died without a charge (no hold, or released): this attempt takes over.
    UPDATE idempotency_keys SET request_id = p_request_id, lease_until = p_lease_until
     WHERE app_id = p_app_id AND idem_key = p_key;
    RETURN 'fresh';
  END LOOP;
END $$;
