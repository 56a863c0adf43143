// The one check of an id that comes from outside (a path, a query, a form, a token) before it meets a PostgreSQL uuid
// column: text that is not a UUID makes such a query fail (22P02, a 500) instead of finding nothing, so a typo or a
// probe is answered like any other id that is not there. Any version and either case, as the column reads them: the
// database, not the form of the id, says whether the thing exists. (API schemas declare theirs with z.uuid(), which
// the OpenAPI document shows as `format: uuid`.)
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
