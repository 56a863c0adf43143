-- Up Migration
-- Every administrative action, append-only: the service only ever inserts here. The trigger refuses UPDATE and
-- DELETE (and TRUNCATE) for every role, so a mistake or a compromised query through the service cannot rewrite history;
-- only a database superuser who drops the trigger can.
CREATE TABLE audit_log (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  actor       text NOT NULL,
  action      text NOT NULL,
  object_type text NOT NULL,
  object_id   text,
  before      jsonb,
  after       jsonb
);
CREATE INDEX audit_log_actor_idx ON audit_log (actor, id DESC);
CREATE INDEX audit_log_action_idx ON audit_log (action, id DESC);
CREATE INDEX audit_log_object_idx ON audit_log (object_id, id DESC);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- Down Migration
DROP TABLE audit_log;
DROP FUNCTION audit_log_append_only();
