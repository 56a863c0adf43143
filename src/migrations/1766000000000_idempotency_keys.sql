-- Up Migration

-- Idempotency-Key (src/http/idempotency.ts): the first answer to a money-moving request, kept 24 hours per caller
-- (`scope`: the marketplace, the cabinet user, the administrator, the widget's deal) and key, so a retry gets the same
-- answer instead of a second move. A row without `status` is in progress while `locked_until` is ahead; once that
-- passes (the attempt answered 5xx, timed out or its process died) a retry runs again under the same Temporal update id.
CREATE TABLE idempotency_keys (
  scope        text NOT NULL CHECK (length(scope) BETWEEN 1 AND 200),
  key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  method       text NOT NULL,
  path         text NOT NULL,
  body_sha256  text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz NOT NULL,
  status       integer,
  content_type text,
  location     text,
  body         text,
  completed_at timestamptz,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Down Migration

DROP TABLE idempotency_keys;
