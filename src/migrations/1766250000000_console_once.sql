-- Up Migration

-- A console form that creates something is sent once: its hidden `_once` key is claimed here before the change is
-- made, so a second post of the same form (a reload, the back button, a double click) finds the claim and is sent to
-- the first one's result instead of creating again. A key or secret made by the change is shown on the page the form
-- redirects to (post/redirect/get), read from here once, sealed with SVC_MASTER_KEY, and blanked when shown or
-- after `expires_at`. Kept in PostgreSQL, not in a process, so every instance sees the same claims.
CREATE TABLE console_once (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  administrator_id text NOT NULL,
  form_key         text NOT NULL,
  location         text,
  reveal_sealed    text,
  back_href        text,
  back_label       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL DEFAULT now() + interval '15 minutes',
  shown_at         timestamptz,
  UNIQUE (administrator_id, form_key)
);
CREATE INDEX console_once_expires_idx ON console_once (expires_at);

-- Down Migration
DROP TABLE console_once;
