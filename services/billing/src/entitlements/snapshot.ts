import type { Express } from 'express';
import { billingSnapshotInternalApi, type EntitlementsSnapshotPage, type SnapshotKind } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { toDecimalString } from '@billstream/money';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const COLUMNS: Record<SnapshotKind, string[]> = {
  features: ['id', 'tenant_id', 'environment_id', 'lookup_key', 'type', 'meter_id', 'status', 'version'],
  entitlements: ['id', 'tenant_id', 'environment_id', 'plan_id', 'feature_id', 'is_enabled', 'usage_limit', 'usage_reset_period', 'is_soft_limit', 'static_value', 'version'],
  subscriptions: ['id', 'tenant_id', 'environment_id', 'customer_id', 'plan_id', 'status', 'start_date', 'current_period_start', 'current_period_end', 'created_at', 'version'],
};

type Row = Record<string, unknown>;
const wire = (kind: SnapshotKind, r: Row): Row => {
  if (kind === 'entitlements') return { ...r, usage_limit: r.usage_limit === null ? null : toDecimalString(r.usage_limit as string) };
  if (kind !== 'subscriptions') return r;
  return { ...r, start_date: iso(r.start_date as Date | null), current_period_start: iso(r.current_period_start as Date | null), current_period_end: iso(r.current_period_end as Date | null), created_at: iso(r.created_at as Date) };
};

/**
 * One page of the snapshot the entitlements service seeds its projection from (ADR 0061):
 * every tenant's rows of one kind after `after`, by id, with their versions. Subscriptions:
 * only the granting ones (active, trialing); any other state reaches the projection by its event.
 */
export async function snapshotPage(db: Db, kind: SnapshotKind, after: string | undefined, limit: number): Promise<EntitlementsSnapshotPage> {
  const q = db<Row>(kind).select(COLUMNS[kind]).orderBy('id').limit(limit + 1);
  if (after !== undefined) q.where('id', '>', after);
  if (kind === 'subscriptions') q.whereIn('status', ['active', 'trialing']);
  const rows = await q;
  const page = rows.slice(0, limit);
  return { items: page.map((r) => wire(kind, r)), next_after: rows.length > limit ? (page.at(-1)!.id as string) : null };
}

export function mountSnapshotRoute(app: Express, db: Db, logger: Logger): void {
  mountRoute(app, billingSnapshotInternalApi.entitlementsSnapshot, async ({ query }) => snapshotPage(db, query.kind, query.after, query.limit), logger);
}
