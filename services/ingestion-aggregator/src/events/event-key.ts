/**
 * The scope of a usage event's dedup key (ADR 0053): the first 8 bytes of SHA-256 over its
 * tenant and environment, as a `bigint`; the tenant is prefixed with its length, so no two
 * different pairs hash the same text. `event_keys` holds `(scope, event_id)`: the event id stays
 * text, so time-ordered ids (ULIDs, UUIDv7) keep inserting at the right of each scope's range.
 * The store statement and migration 009 (which turned the earlier keys into these) share this
 * expression: a change of it would make stored events duplicable again, so it never changes.
 */
export function eventScopeSql(tenantId: string, environmentId: string): string {
  return `('x' || encode(substr(sha256(convert_to(length(${tenantId}) || ':' || ${tenantId} || ${environmentId}, 'UTF8')), 1, 8), 'hex'))::bit(64)::bigint`;
}
