-- Up Migration

-- The console lists every marketplace's deals newest first, finds them by external_id across marketplaces, and
-- lists decided disputes newest decision first (open ones already have deal_disputes_open_idx).
CREATE INDEX deals_created_idx ON deals (created_at DESC, id DESC);
CREATE INDEX deals_external_id_idx ON deals (external_id);
CREATE INDEX deal_disputes_decided_idx ON deal_disputes (decided_at DESC, deal_id DESC) WHERE status = 'decided';

-- Down Migration
DROP INDEX deal_disputes_decided_idx, deals_external_id_idx, deals_created_idx;
