#!/usr/bin/env bash
# Runs once, when the Postgres container initialises an empty data directory
# (mounted into /docker-entrypoint-initdb.d by docker-compose.yml).
#
# One database, one schema and one login role per service: each role owns its schema and
# has no right on the others, so the database itself enforces that a service reads and
# writes only its own data. CREATE on the database is granted because migrations start
# with `CREATE SCHEMA IF NOT EXISTS`, which Postgres checks before it sees the schema exists.
set -euo pipefail

create_service_role() {
  local schema="$1" password="$2"
  local role="billstream_${schema}"
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    -v role="$role" -v schema="$schema" -v password="$password" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', :'schema', :'role') \gexec
SELECT format('GRANT CONNECT, CREATE ON DATABASE %I TO %I', current_database(), :'role') \gexec
SQL
}

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -c "REVOKE ALL ON DATABASE \"$POSTGRES_DB\" FROM PUBLIC" \
  -c "REVOKE CREATE ON SCHEMA public FROM PUBLIC"

create_service_role gateway "${GATEWAY_DB_PASSWORD:?}"
create_service_role customer "${CUSTOMER_DB_PASSWORD:?}"
create_service_role wallet "${WALLET_DB_PASSWORD:?}"
create_service_role ingestion "${INGESTION_DB_PASSWORD:?}"
create_service_role webhook "${WEBHOOK_DB_PASSWORD:?}"
create_service_role billing "${BILLING_DB_PASSWORD:?}"
create_service_role entitlements "${ENTITLEMENTS_DB_PASSWORD:?}"
