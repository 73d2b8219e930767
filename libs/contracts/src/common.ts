import { z } from 'zod';

export const PERMISSIONS = [
  'customers:read',
  'customers:write',
  'wallets:read',
  'wallets:write',
  'events:read',
  'events:write',
  'webhooks:read',
  'webhooks:write',
  'meters:read',
  'meters:write',
  'api_keys:read',
  'api_keys:write',
  'api_keys:tenant',
  'plans:read',
  'plans:write',
  'subscriptions:read',
  'subscriptions:write',
  'invoices:read',
  'invoices:write',
  /** A payment processor's callbacks: settle a PROVIDER payment (succeed or fail); `invoices:write` does not give it. */
  'payments:settle',
  'tasks:read',
  'tasks:write',
  'credit_grants:read',
  'credit_grants:write',
  'credit_notes:read',
  'credit_notes:write',
  'coupons:read',
  'coupons:write',
  'settings:read',
  'settings:write',
  'reservations:read',
  'reservations:write',
  'taxes:read',
  'taxes:write',
  /** Open and revoke customer portal sessions (docs/api/portal.md). */
  'portal:write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The tenant and environment a record belongs to: every store call is scoped by it. */
export interface Scope {
  tenantId: string;
  environmentId: string;
}

/** ISO 8601 with a zone (`Z` or `+hh:mm`), up to nanosecond fractions. */
export const ISO_TIMESTAMP_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/;

export const isoTimestamp = z
  .string()
  .regex(ISO_TIMESTAMP_WITH_ZONE, 'must be an ISO 8601 timestamp with a zone (Z or +hh:mm)')
  .refine((v) => !Number.isNaN(Date.parse(v.replace(/(\.\d{3})\d+/, '$1'))), 'is not a valid date');

/** Decimal amount as a string, exact: "12", "0.5", "-3.25" (up to 18 fraction digits). */
export const decimalString = z
  .string()
  .regex(/^-?(0|[1-9]\d{0,27})(\.\d{1,18})?$/, 'must be a decimal number written as a string, e.g. "12.50"');

export const positiveDecimalString = decimalString.refine((v) => !v.startsWith('-') && /[1-9]/.test(v), 'must be greater than 0');

/** `limit` and `offset` of the list endpoints (query strings). */
export const paginationQuery = {
  limit: z.coerce.number().int('must be an integer').min(1, 'must be between 1 and 1000').max(1000, 'must be between 1 and 1000').default(50),
  offset: z.coerce.number().int('must be an integer').min(0, 'must be 0 or more').default(0),
};

/** A comma-separated query value (or the same key repeated) as a list of strings. */
export const csvList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean));

/** Tax rates a customer, plan or price names (docs/api/taxes.md#which-rates-a-line-bears): ids of active rates, no repeats; billing checks they exist. */
export const taxRateIdsSchema = z
  .array(z.string().regex(/^txr_[A-Za-z0-9]{1,64}$/, 'must be a tax rate id (txr_...)'), { error: 'must be an array of tax rate ids' })
  .max(10, 'at most 10 tax rates')
  .refine((ids) => new Set(ids).size === ids.length, 'must not name a tax rate twice');

/** How a line's amount holds its tax (docs/api/taxes.md#arithmetic): tax added to it, or inside it. */
export const TAX_BEHAVIORS = ['exclusive', 'inclusive'] as const;
export type TaxBehaviorName = (typeof TAX_BEHAVIORS)[number];

/** The EU's 27 member states (ISO 3166-1 alpha-2; Greece is GR, its VAT prefix EL), for the reverse charge (docs/api/taxes.md#which-rates-a-line-bears). */
export const EU_MEMBER_STATES: ReadonlySet<string> = new Set(['AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT', 'LU', 'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE']);

export const queryBoolean = z.enum(['true', 'false']).transform((v) => v === 'true');

export const metadataSchema = z.record(z.string(), z.string().max(2000)).refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');

export const paginationSchema = z.object({ total: z.number().int(), limit: z.number().int(), offset: z.number().int() });

export function listResponse<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), pagination: paginationSchema });
}

/** A page of a list held whole (a subscription's discounts, a customer's entitlements): the list convention's shape. */
export function pageOf<T>(all: readonly T[], q: { limit: number; offset: number }) {
  return { items: all.slice(q.offset, q.offset + q.limit), pagination: { total: all.length, limit: q.limit, offset: q.offset } };
}

export const errorEnvelopeSchema = z.object({
  success: z.literal(false),
  error: z.object({
    message: z.string(),
    internal_error: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
  hint: z.string().optional(),
});
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

export interface Page<T> {
  items: T[];
  pagination: { total: number; limit: number; offset: number };
}
