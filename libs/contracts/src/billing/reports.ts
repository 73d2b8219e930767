import { z } from 'zod';
import { defineRoute, type RouteDef } from '../routes';

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
};

export const reportRoutes: RouteDef[] = Object.values(reportApi) as RouteDef[];
