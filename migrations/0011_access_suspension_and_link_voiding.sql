-- An operator's suspension belongs to the app's access of one kind (live or test), not
-- to one key (docs/DECISIONS.md "Suspension"): every key of that app and kind is
-- refused 403 key_suspended while it is set, the key the operator named, the partner
-- it overlaps with after a reissue, and any key issued later. Only the operator lifts it.
ALTER TABLE apps ADD COLUMN live_suspended_at timestamptz;
ALTER TABLE apps ADD COLUMN test_suspended_at timestamptz;

-- Suspensions made on keys so far become their app's, deleted or replaced keys
-- included: a customer who deleted a suspended key and issued another is refused again.
UPDATE apps a
   SET live_suspended_at = s.at
  FROM (SELECT app_id, min(suspended_at) AS at FROM api_keys WHERE kind = 'live' AND suspended_at IS NOT NULL GROUP BY app_id) s
 WHERE a.app_id = s.app_id;
UPDATE apps a
   SET test_suspended_at = s.at
  FROM (SELECT app_id, min(suspended_at) AS at FROM api_keys WHERE kind = 'test' AND suspended_at IS NOT NULL GROUP BY app_id) s
 WHERE a.app_id = s.app_id;
-- api_keys.suspended_at is no longer read or written. It stays so that processes of the
-- release before this one, still answering during a rolling update, find the column.

-- "Sign out everywhere" voids the person's unused sign-in links, found by address.
CREATE INDEX console_login_tokens_unused ON console_login_tokens (lower(email)) WHERE used_at IS NULL;
