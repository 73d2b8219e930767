import {
  minorDigits,
  normalizeEventTimestamp,
  type EventExportPage,
  type Scope,
  type TaskEntity,
  type TaskFilters,
  type TaxReport,
  type TaxReportQuery,
} from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import type { InternalClient } from '@billstream/http';
import type { InvoiceStore } from '../invoices/store';
import { DecimalCell } from './files';
import { toInvoiceView } from '../invoices/view';

/**
 * Where an export reads its rows: always from the owning service's data
 * (docs/architecture.md#rule-1), a bounded page at a time, after a cursor that the task's checkpoint keeps.
 * - EVENTS: the ingestion-aggregator's internal keyset page (`/internal/v1/events/export-page`),
 *   whose items are the events query's;
 * - CUSTOMERS: the customer service's list, oldest first, by offset;
 * - INVOICES: billing's own invoices, keyset on (created_at, id);
 * - TAX_REPORT: the tax report's rows (`GET /v1/reports/taxes`), one page.
 */
export interface ExportPage {
  rows: Array<Record<string, unknown>>;
  /** The cursor after this page; null when it was the last. */
  next: unknown;
}

export type ExportSource = (scope: Scope, filters: TaskFilters, cursor: unknown, requestId: string) => Promise<ExportPage>;

/** The tax report's amounts, each written in minor units and as a decimal string in the currency's major unit. */
const TAX_AMOUNTS = ['invoiced_taxable', 'invoiced_tax', 'credited_taxable', 'credited_tax', 'net_taxable', 'net_tax'] as const;

export const EXPORT_COLUMNS: Record<TaskEntity, readonly string[]> = {
  EVENTS: ['event_id', 'event_name', 'external_customer_id', 'customer_id', 'timestamp', 'source', 'properties'],
  CUSTOMERS: [
    'id',
    'external_id',
    'name',
    'email',
    'address_line1',
    'address_line2',
    'address_city',
    'address_state',
    'address_postal_code',
    'address_country',
    'parent_customer_id',
    'metadata',
    'status',
    'tenant_id',
    'environment_id',
    'created_at',
    'updated_at',
  ],
  INVOICES: [
    'id',
    'invoice_number',
    'customer_id',
    'subscription_id',
    'billing_reason',
    'status',
    'payment_status',
    'currency',
    'period_start',
    'period_end',
    'due_date',
    'overdue',
    'subtotal',
    'total_prepaid_credits_applied',
    'total',
    'amount_due',
    'amount_paid',
    'amount_remaining',
    'finalized_at',
    'voided_at',
    'created_at',
    'updated_at',
    'tenant_id',
    'environment_id',
  ],
  TAX_REPORT: [
    'currency',
    'treatment',
    'tax_rate_id',
    'code',
    'tax_type',
    'country',
    'region',
    'percentage',
    ...TAX_AMOUNTS.flatMap((a) => [a, `${a}_decimal`]),
  ],
};

/**
 * The field of an exported row that a CSV column holds where their names differ: an events CSV
 * keeps docs/api/tasks.md's `event_id` column for the events query's `id` (a JSONL line is the query's
 * item as it is).
 */
export const CSV_FIELDS: Partial<Record<TaskEntity, Readonly<Record<string, string>>>> = { EVENTS: { event_id: 'id' } };

function unavailable(what: string, status: number, text: string): Error {
  return new ServiceUnavailableError(`The ${what} could not be read now (status ${status}); the task retries`, { upstream: text.slice(0, 200) });
}

export function eventSource(client: InternalClient, pageSize: number): ExportSource {
  return async (scope, filters, cursor, requestId) => {
    const body = { ...filters, after: (cursor as EventExportPage['next']) ?? null, limit: pageSize };
    const { status, text } = await client.call(scope, 'POST', '/internal/v1/events/export-page', requestId, body);
    if (status !== 200) throw unavailable('events', status, text);
    const page = JSON.parse(text) as EventExportPage;
    return { rows: page.events, next: page.next };
  };
}

const CUSTOMER_PAGE = 1000;

export function customerSource(client: InternalClient): ExportSource {
  return async (scope, filters, cursor, requestId) => {
    const offset = typeof cursor === 'number' ? cursor : 0;
    const query = new URLSearchParams({ sort: 'created_at', order: 'asc', limit: String(CUSTOMER_PAGE), offset: String(offset) });
    if (filters.external_customer_id) query.set('external_id', filters.external_customer_id);
    const { status, text } = await client.call(scope, 'GET', `/v1/customers?${query.toString()}`, requestId);
    if (status !== 200) throw unavailable('customers', status, text);
    const page = JSON.parse(text) as { items: Array<Record<string, unknown> & { created_at: string }> };
    const from = filters.start_time ? Date.parse(filters.start_time) : -Infinity;
    const to = filters.end_time ? Date.parse(filters.end_time) : Infinity;
    const rows = page.items.filter((c) => {
      const t = Date.parse(c.created_at);
      return t >= from && t < to;
    });
    return { rows, next: page.items.length === CUSTOMER_PAGE ? offset + CUSTOMER_PAGE : null };
  };
}

export function invoiceSource(db: Db, invoices: InvoiceStore, pageSize: number): ExportSource {
  return async (scope, filters, cursor) => {
    const after = (cursor as { created_at: string; id: string } | null) ?? null;
    const page = await invoices.exportPage(db, scope, {
      from: filters.start_time ? normalizeEventTimestamp(filters.start_time) : undefined,
      to: filters.end_time ? normalizeEventTimestamp(filters.end_time) : undefined,
      externalCustomerId: filters.external_customer_id,
      after,
      limit: pageSize,
    });
    const rows = page.items.map((i) => {
      const { line_items: _lines, available_actions: _actions, ...view } = toInvoiceView(i);
      return view as Record<string, unknown>;
    });
    return { rows, next: page.next };
  };
}

/** Minor units as a decimal string of the currency's major unit: 1990 usd is "19.90", -5 usd "-0.05", 500 jpy "500" (exact, no float). */
export function minorToDecimal(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  const abs = BigInt(Math.abs(minor)).toString().padStart(digits + 1, '0');
  const text = digits === 0 ? abs : `${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
  return minor < 0 ? `-${text}` : text;
}

/** The rows of a TAX_REPORT file: the report's rows, each amount also as a decimal string. */
export function taxReportFileRows(report: TaxReport): Array<Record<string, unknown>> {
  return report.rows.map((r) => {
    const row: Record<string, unknown> = { ...r };
    for (const a of TAX_AMOUNTS) row[`${a}_decimal`] = new DecimalCell(minorToDecimal(r[a], r.currency));
    return row;
  });
}

/**
 * The tax report as a file: its window is the task's `start_time` and `end_time` (both required
 * and at most 366 days apart, checked when the task is created), its currency the `currency`
 * filter. The report is a few rows per currency and rate, so one page.
 */
export function taxReportSource(report: (scope: Scope, q: TaxReportQuery) => Promise<TaxReport>): ExportSource {
  return async (scope, filters) => {
    if (!filters.start_time || !filters.end_time) throw new Error('a TAX_REPORT task has no window');
    const answer = await report(scope, { from: filters.start_time, to: filters.end_time, ...(filters.currency ? { currency: filters.currency } : {}) });
    return { rows: taxReportFileRows(answer), next: null };
  };
}
