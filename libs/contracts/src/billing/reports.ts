import { z } from 'zod';
import { isoTimestamp } from '../common';
import { defineRoute, type RouteDef } from '../routes';
import { currencyCode } from './prices';

const day = z.iso.date({ error: 'must be a real date YYYY-MM-DD' });

/** `GET /v1/reports/billing_daily`: a range of UTC days, at most 92. */
export const billingDailyQuery = z
  .strictObject({ start_date: day, end_date: day })
  .superRefine((q, ctx) => {
    const days = (Date.parse(`${q.end_date}T00:00:00Z`) - Date.parse(`${q.start_date}T00:00:00Z`)) / 86_400_000;
    if (days < 0) ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'must not be before start_date' });
    else if (days > 91) ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'the range is at most 92 days' });
  });

export const billingDailySchema = z.object({
  start_date: z.string(),
  end_date: z.string(),
  days: z.array(z.object({ date: z.string(), currency: z.string(), invoiced: z.number().int(), collected: z.number().int() })),
});

/** The longest window of the tax report: 366 days (a year, a leap year's too). */
export const TAX_REPORT_MAX_DAYS = 366;

/**
 * The window of the tax report (docs/api/taxes.md#tax-report): `from` inclusive, `to` exclusive,
 * both ISO 8601 with a zone, `from` before `to`, at most 366 days apart. Shared by the report and
 * the TAX_REPORT export's filters.
 */
export function checkTaxWindow(from: string, to: string): { path: string; message: string } | undefined {
  const span = Date.parse(to) - Date.parse(from);
  if (!(span > 0)) return { path: 'to', message: 'must be after from' };
  if (span > TAX_REPORT_MAX_DAYS * 86_400_000) return { path: 'to', message: `the window is at most ${TAX_REPORT_MAX_DAYS} days` };
  return undefined;
}

/** `GET /v1/reports/taxes`: a window of time and, optionally, one currency. */
export const taxReportQuery = z
  .strictObject({ from: isoTimestamp, to: isoTimestamp, currency: currencyCode.optional() })
  .superRefine((q, ctx) => {
    const bad = checkTaxWindow(q.from, q.to);
    if (bad) ctx.addIssue({ code: 'custom', path: [bad.path], message: bad.message });
  })
  .meta({ examples: [{ from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z', currency: 'eur' }] });
export type TaxReportQuery = z.output<typeof taxReportQuery>;

export const TAX_TREATMENTS = ['taxed', 'reverse_charge', 'exempt'] as const;
export type TaxTreatment = (typeof TAX_TREATMENTS)[number];

const amount = z.number().int();
export const taxReportRowSchema = z
  .object({
    currency: z.string(),
    /** `taxed`: one row per rate; `reverse_charge` and `exempt`: what such invoices billed, untaxed (no rate). */
    treatment: z.enum(TAX_TREATMENTS),
    tax_rate_id: z.string().nullable(),
    code: z.string().nullable(),
    tax_type: z.string().nullable(),
    country: z.string().nullable(),
    region: z.string().nullable(),
    percentage: z.string().nullable(),
    invoiced_taxable: amount,
    invoiced_tax: amount,
    credited_taxable: amount,
    credited_tax: amount,
    net_taxable: amount,
    net_tax: amount,
  })
  .meta({ id: 'TaxReportRow' });
export type TaxReportRow = z.infer<typeof taxReportRowSchema>;

export const taxReportSchema = z.object({
  from: z.string(),
  to: z.string(),
  currency: z.string().nullable(),
  rows: z.array(taxReportRowSchema),
  totals: z.array(z.object({ currency: z.string(), invoiced_tax: amount, credited_tax: amount, net_tax: amount })),
}).meta({
  examples: [
    {
      from: '2026-11-01T00:00:00Z',
      to: '2026-12-01T00:00:00Z',
      currency: 'eur',
      rows: [
        { currency: 'eur', treatment: 'taxed', tax_rate_id: 'txr_01JDQ8Z6Y4K2M9N3P5R7T9V1X3', code: 'DE_VAT_19', tax_type: 'VAT', country: 'DE', region: null, percentage: '19', invoiced_taxable: 250000, invoiced_tax: 47500, credited_taxable: 10000, credited_tax: 1900, net_taxable: 240000, net_tax: 45600 },
        { currency: 'eur', treatment: 'reverse_charge', tax_rate_id: null, code: null, tax_type: null, country: null, region: null, percentage: null, invoiced_taxable: 60000, invoiced_tax: 0, credited_taxable: 0, credited_tax: 0, net_taxable: 60000, net_tax: 0 },
      ],
      totals: [{ currency: 'eur', invoiced_tax: 47500, credited_tax: 1900, net_tax: 45600 }],
    },
  ],
});
export type TaxReport = z.infer<typeof taxReportSchema>;

export const reportApi = {
  billingDaily: defineRoute({
    operationId: 'getBillingDaily',
    method: 'get',
    path: '/v1/reports/billing_daily',
    service: 'billing',
    permission: 'invoices:read',
    summary: 'Invoiced (finalized invoices, by finalization day) and collected (succeeded payments, by day) per UTC day and currency, in minor units, summed by the database',
    tag: 'Invoices',
    query: billingDailyQuery,
    response: billingDailySchema,
    status: 200,
  }),
  taxReport: defineRoute({
    operationId: 'getTaxReport',
    method: 'get',
    path: '/v1/reports/taxes',
    service: 'billing',
    permission: 'taxes:read',
    summary:
      'Per currency and tax rate: the taxable amount and tax of invoices finalized in [from, to), less those of credit notes issued in it, and the net; reverse-charged and exempt invoices as untaxed rows; totals per currency (minor units)',
    tag: 'Taxes',
    query: taxReportQuery,
    response: taxReportSchema,
    status: 200,
  }),
};

export const reportRoutes: RouteDef[] = Object.values(reportApi) as RouteDef[];
