#!/bin/sh
# docker-compose.yml's one-shot Temporal jobs, run in temporalio/admin-tools:
#   schema     before the server: creates Temporal's two databases on the first run and brings both schemas up to
#              the image's version on every run, so it runs again harmlessly and upgrades after a new image;
#   namespace  once the server is up: the namespace our processes use (the worker adds the search attributes).
set -eu
case "$1" in
  schema)
    tool() { temporal-sql-tool --plugin postgres12 --ep postgresql -p 5432 -u "$POSTGRES_USER" "$@"; }
    for pair in temporal:temporal temporal_visibility:visibility; do
      db=${pair%%:*}
      dir=${pair##*:}
      if tool --db "$db" create-database 2>/dev/null; then
        tool --db "$db" setup-schema -v 0.0
      fi
      tool --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$dir/versioned"
    done
    ;;
  namespace)
    temporal operator namespace describe -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1 ||
      temporal operator namespace create -n "$TEMPORAL_NAMESPACE" --retention 72h
    ;;
  *)
    echo "usage: $0 schema|namespace" >&2
    exit 2
    ;;
esac
