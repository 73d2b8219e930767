import { z } from 'zod';
import { isoTimestamp } from '../common';
import { defineRoute } from '../routes';

/**
 * Real-time balance (docs/api/wallets.md#balance; docs/adr/0024-real-time-unbilled-usage.md).
 * The billing service hands the wallet service the unbilled usage charges of customers; the
 * wallet takes them off the real-time balance of PRE_PAID wallets that allow USAGE. Internal:
 * NOT in ALL_ROUTES (the gateway answers 404, the OpenAPI document does not show it).
 */

/** At most this many customers per call. */
export const MAX_UNBILLED_CUSTOMERS = 500;

const minorUnits = z.number().int('must be an integer in minor units').min(0, 'must be 0 or more').max(Number.MAX_SAFE_INTEGER);

export const unbilledUsageAmount = z.strictObject({
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code')
    .transform((v) => v.toLowerCase()),
  /** The usage lines of the current periods' upcoming invoices, in minor units, with the exclusive tax they would bear when taxes are on (docs/api/taxes.md#unbilled-usage-and-the-real-time-balance). */
  amount: minorUnits,
  /** Usage lines of draft invoices of ended periods (with their exclusive tax): they count until the wallet allocated the invoice. */
  invoices: z.array(z.strictObject({ invoice_id: z.string().min(1).max(255), amount: minorUnits })).max(1000).default([]),
});

export const unbilledUsageBody = z.strictObject({
  /** The time up to which usage was read; an older computation never replaces a newer one. */
  as_of: isoTimestamp,
  customers: z
    .array(
      z.strictObject({
        customer_id: z.string().min(1).max(255),
        /** Every currency the customer has unbilled usage in; a wallet of a currency not listed has none. */
        amounts: z.array(unbilledUsageAmount).max(50),
      }),
    )
    .min(1)
    .max(MAX_UNBILLED_CUSTOMERS),
});
export type UnbilledUsageBody = z.output<typeof unbilledUsageBody>;

export const unbilledUsageResultSchema = z.object({
  /** Wallets whose unbilled usage changed (older as_of and wallets that do not count usage are left out). */
  wallets_updated: z.number().int(),
});

export const walletUnbilledUsageApi = {
  recordUnbilledUsage: defineRoute({
    operationId: 'internalRecordUnbilledUsage',
    method: 'post',
    path: '/internal/v1/unbilled-usage',
    service: 'wallet',
    permission: 'wallets:write',
    summary: "Record customers' unbilled usage charges for the real-time balance (billing)",
    tag: 'Internal',
    body: unbilledUsageBody,
    response: unbilledUsageResultSchema,
    status: 200,
  }),
};
