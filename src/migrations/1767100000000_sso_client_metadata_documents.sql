-- Up Migration

-- Client ID metadata documents (the MCP authorization specification; draft-ietf-oauth-client-id-metadata-document): a
-- client whose client_id is an https URL is described by the JSON document at that URL. The client itself is a row of
-- sso_clients (public, registered_dynamically), made or updated from the document; this table keeps the document as
-- fetched and until when its HTTP cache lifetime lets it stand in for a new fetch.
CREATE TABLE sso_client_metadata_documents (
  client_id  text PRIMARY KEY REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  document   jsonb NOT NULL,
  fetched_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE sso_client_metadata_documents;
