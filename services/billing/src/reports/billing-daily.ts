import type { Express } from 'express';
import { reportApi } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Scope } from '@billstream/contracts';
import { taxReport } from './tax-report';

export interface DayTotals {
  date: string;
  currency: string;
  invoiced: number;
  collected: number;
}

/**
 * The console's overview (issue #33): per UTC day and currency, what was invoiced (the totals of
 * invoices finalized that day and not voided) and collected (succeeded payments made that day),
 * in minor units. The database sums over its indexes; no invoice or payment is loaded.
 */
export async function billingDaily(db: Db, scope: Scope, startDate: string, endDate: string): Promise<DayTotals[]> {
  const from = new Date(`${startDate}T00:00:00Z`);
  const to = new Date(Date.parse(`${endDate}T00:00:00Z`) + 86_400_000);
  const day = (col: string) => db.raw(`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`);
  const [invoiced, collected] = await Promise.all([
    db('invoices')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('status', ['finalized', 'paid'])
      .where('finalized_at', '>=', from)
      .where('finalized_at', '<', to)
      .select({ date: day('finalized_at'), currency: 'currency' })
      .sum({ amount: 'total' })
      .groupByRaw('1, 2') as Promise<Array<{ date: string; currency: string; amount: string | number }>>,
    db('payments')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, payment_status: 'succeeded' })
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .select({ date: day('created_at'), currency: 'currency' })
      .sum({ amount: 'amount' })
      .groupByRaw('1, 2') as Promise<Array<{ date: string; currency: string; amount: string | number }>>,
  ]);
  const byKey = new Map<string, DayTotals>();
  const at = (date: string, currency: string) => {
    const key = `${date} ${currency}`;
    let row = byKey.get(key);
    if (!row) byKey.set(key, (row = { date, currency, invoiced: 0, collected: 0 }));
    return row;
  };
  for (const r of invoiced) at(r.date, r.currency).invoiced += Number(r.amount);
  for (const r of collected) at(r.date, r.currency).collected += Number(r.amount);
  return [...byKey.values()].sort((a, b) => (a.date === b.date ? a.currency.localeCompare(b.currency) : a.date.localeCompare(b.date)));
}

export function mountReportRoutes(app: Express, db: Db, logger: Logger): void {
  mountRoute(
    app,
    reportApi.billingDaily,
    async ({ query, ctx }) => ({ start_date: query.start_date, end_date: query.end_date, days: await billingDaily(db, ctx, query.start_date, query.end_date) }),
    logger,
  );
  mountRoute(app, reportApi.taxReport, async ({ query, ctx }) => taxReport(db, ctx, query), logger);
}
