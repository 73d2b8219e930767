import type { Scope, TaxReport, TaxReportQuery, TaxReportRow, TaxTreatment } from '@billstream/contracts';
import type { Db } from '@billstream/db';

/** One sum the database made: of invoices or of credit notes, per currency and rate (or untaxed treatment). */
export interface TaxSum {
  currency: string;
  /** The rate of a `taxed` sum; null for `reverse_charge` and `exempt`. */
  taxRateId: string | null;
  treatment: TaxTreatment;
  taxable: number;
  tax: number;
}

/** What the report shows of a rate (from billing's tax rates: code, country, region and percentage never change). */
export interface RateInfo {
  id: string;
  code: string;
  taxType: string;
  country: string | null;
  region: string | null;
  percentage: string;
}

const TREATMENT_ORDER: Record<TaxTreatment, number> = { taxed: 0, reverse_charge: 1, exempt: 2 };

/**
 * The tax report from the database's sums (pure): one row per currency and rate (`taxed`), and
 * one per currency for what reverse-charged and exempt invoices billed untaxed; invoiced less
 * credited is the net. Rows in a stable order: currency, then taxed before reverse_charge before
 * exempt, then the rate's code and id. Totals per currency add the rows' tax (a line bearing two
 * rates counts its base in each rate's row, so taxable amounts are not added across rates).
 */
export function assembleTaxReport(
  q: { from: string; to: string; currency?: string },
  invoiced: readonly TaxSum[],
  credited: readonly TaxSum[],
  rates: ReadonlyMap<string, RateInfo>,
): TaxReport {
  const rows = new Map<string, TaxReportRow>();
  const at = (s: TaxSum): TaxReportRow => {
    const key = `${s.currency} ${s.treatment} ${s.taxRateId ?? ''}`;
    let row = rows.get(key);
    if (!row) {
      const rate = s.taxRateId ? rates.get(s.taxRateId) : undefined;
      row = {
        currency: s.currency,
        treatment: s.treatment,
        tax_rate_id: s.taxRateId,
        code: rate?.code ?? null,
        tax_type: rate?.taxType ?? null,
        country: rate?.country ?? null,
        region: rate?.region ?? null,
        percentage: rate?.percentage ?? null,
        invoiced_taxable: 0,
        invoiced_tax: 0,
        credited_taxable: 0,
        credited_tax: 0,
        net_taxable: 0,
        net_tax: 0,
      };
      rows.set(key, row);
    }
    return row;
  };
  for (const s of invoiced) {
    const row = at(s);
    row.invoiced_taxable += s.taxable;
    row.invoiced_tax += s.tax;
  }
  for (const s of credited) {
    const row = at(s);
    row.credited_taxable += s.taxable;
    row.credited_tax += s.tax;
  }
  const sorted = [...rows.values()].sort(
    (a, b) =>
      a.currency.localeCompare(b.currency) ||
      TREATMENT_ORDER[a.treatment] - TREATMENT_ORDER[b.treatment] ||
      (a.code ?? '').localeCompare(b.code ?? '') ||
      (a.tax_rate_id ?? '').localeCompare(b.tax_rate_id ?? ''),
  );
  const totals = new Map<string, { currency: string; invoiced_tax: number; credited_tax: number; net_tax: number }>();
  for (const row of sorted) {
    row.net_taxable = row.invoiced_taxable - row.credited_taxable;
    row.net_tax = row.invoiced_tax - row.credited_tax;
    let total = totals.get(row.currency);
    if (!total) totals.set(row.currency, (total = { currency: row.currency, invoiced_tax: 0, credited_tax: 0, net_tax: 0 }));
    total.invoiced_tax += row.invoiced_tax;
    total.credited_tax += row.credited_tax;
    total.net_tax += row.net_tax;
  }
  return { from: q.from, to: q.to, currency: q.currency ?? null, rows: sorted, totals: [...totals.values()] };
}

type Raw = { currency: string; tax_rate_id: string | null; treatment: TaxTreatment; taxable: string | number; tax: string | number };
const sums = (rows: Raw[]): TaxSum[] =>
  rows.map((r) => ({ currency: r.currency, taxRateId: r.tax_rate_id, treatment: r.treatment, taxable: Number(r.taxable), tax: Number(r.tax) }));

/**
 * The tax report (docs/api/taxes.md#tax-report), summed by the database from what invoices and
 * credit notes snapshotted: each invoice finalized in [from, to) (still finalized, paid, or voided
 * since: its void's credit note takes it back) by its `tax_breakdown`, each credit note issued in
 * [from, to) and not voided by its lines' `taxes`; reverse-charged and exempt invoices (and their
 * notes) by their positive lines' net amounts. Invoiced top-ups (CREDIT_PURCHASE) bear no tax and
 * are left out. No invoice or note is loaded.
 */
export async function taxReport(db: Db, scope: Scope, q: TaxReportQuery): Promise<TaxReport> {
  const from = new Date(q.from);
  const to = new Date(q.to);
  const cur = q.currency ? 'AND i.currency = ?' : '';
  const curNote = q.currency ? 'AND n.currency = ?' : '';
  const c = q.currency ? [q.currency] : [];
  const invoiceWindow = `i.tenant_id = ? AND i.environment_id = ? AND i.status <> 'draft' AND i.billing_reason <> 'CREDIT_PURCHASE'
    AND i.finalized_at >= ? AND i.finalized_at < ? ${cur}`;
  const noteWindow = `n.tenant_id = ? AND n.environment_id = ? AND n.status = 'issued' AND n.created_at >= ? AND n.created_at < ? ${curNote}`;
  const w = [scope.tenantId, scope.environmentId, from, to, ...c];
  const untaxed = `CASE WHEN i.reverse_charge THEN 'reverse_charge' ELSE 'exempt' END`;
  const [invoicedTaxed, invoicedUntaxed, creditedTaxed, creditedUntaxed] = await Promise.all([
    db.raw(
      `SELECT i.currency, b.tax_rate_id, 'taxed' AS treatment, sum(b.taxable_amount) AS taxable, sum(b.amount) AS tax
         FROM invoices i CROSS JOIN LATERAL jsonb_to_recordset(i.tax_breakdown) AS b(tax_rate_id text, taxable_amount bigint, amount bigint)
        WHERE ${invoiceWindow} GROUP BY 1, 2`,
      w,
    ),
    db.raw(
      `SELECT i.currency, NULL AS tax_rate_id, ${untaxed} AS treatment, sum(l.net_amount) AS taxable, 0 AS tax
         FROM invoices i JOIN invoice_line_items l ON l.invoice_id = i.id AND l.net_amount > 0
        WHERE ${invoiceWindow} AND (i.reverse_charge OR i.tax_exempt_reason IS NOT NULL) GROUP BY 1, 3`,
      w,
    ),
    // A note line's amount is in its invoice line's terms: an inclusive line's holds its tax.
    db.raw(
      `SELECT n.currency, t.tax_rate_id, 'taxed' AS treatment,
              sum(cl.amount - CASE WHEN l.tax_behavior = 'inclusive' THEN cl.tax_amount ELSE 0 END) AS taxable, sum(t.amount) AS tax
         FROM credit_notes n JOIN credit_note_lines cl ON cl.credit_note_id = n.id
         JOIN invoice_line_items l ON l.id = cl.invoice_line_item_id
         CROSS JOIN LATERAL jsonb_to_recordset(cl.taxes) AS t(tax_rate_id text, amount bigint)
        WHERE ${noteWindow} GROUP BY 1, 2`,
      w,
    ),
    db.raw(
      `SELECT n.currency, NULL AS tax_rate_id, ${untaxed} AS treatment, sum(n.amount) AS taxable, 0 AS tax
         FROM credit_notes n JOIN invoices i ON i.id = n.invoice_id
        WHERE ${noteWindow} AND (i.reverse_charge OR i.tax_exempt_reason IS NOT NULL) GROUP BY 1, 3`,
      w,
    ),
  ]);
  const invoiced = [...sums(invoicedTaxed.rows as Raw[]), ...sums(invoicedUntaxed.rows as Raw[])];
  const credited = [...sums(creditedTaxed.rows as Raw[]), ...sums(creditedUntaxed.rows as Raw[])];
  const ids = [...new Set([...invoiced, ...credited].map((s) => s.taxRateId).filter((id): id is string => id !== null))];
  const rateRows =
    ids.length === 0
      ? []
      : ((await db('tax_rates')
          .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
          .whereIn('id', ids)
          .select('id', 'code', 'tax_type', 'country', 'region', 'percentage')) as Array<{ id: string; code: string; tax_type: string; country: string | null; region: string | null; percentage: string }>);
  const rates = new Map<string, RateInfo>(
    rateRows.map((r) => [r.id, { id: r.id, code: r.code, taxType: r.tax_type, country: r.country, region: r.region, percentage: trimPercentage(String(r.percentage)) }]),
  );
  return assembleTaxReport(q, invoiced, credited, rates);
}

/** A `numeric(7, 4)` as the rates answer it: without trailing zeros ("19.0000" is "19"). */
export function trimPercentage(value: string): string {
  return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value;
}
