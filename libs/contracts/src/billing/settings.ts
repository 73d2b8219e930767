import { z } from 'zod';
import { TAX_BEHAVIORS } from '../common';
import { defineRoute, type RouteDef } from '../routes';

/** Billing settings of a tenant and environment (docs/api/billing.md#billing-settings-and-dunning, ADR 0044). */
const days = z.number({ error: 'must be a number of days' }).min(0, 'must be at least 0').max(3650, 'must be at most 3650');

/** Dunning: the period job's retries of an overdue invoice as PENDING PROVIDER payments. */
export const dunningSettingsSchema = z.object({
  enabled: z.boolean(),
  /** Days after the due date of each attempt, ascending; decimals allowed (0.001 is 86.4 s). */
  retry_schedule_days: z.array(days),
  max_attempts: z.number().int(),
  /** The processor of an attempt when the invoice had no PROVIDER payment before. */
  provider: z.string().nullable(),
});
export type DunningSettings = z.infer<typeof dunningSettingsSchema>;

/** The seller as invoice documents show it. */
export const invoiceSettingsSchema = z.object({
  company_name: z.string(),
  address: z.string(),
  logo_url: z.string().nullable(),
  footer: z.string().nullable(),
  tax_id: z.string().nullable(),
  /** The seller's country (ISO 3166-1 alpha-2), for tax (docs/api/taxes.md#settings); absent in settings saved before it existed. */
  country: z.string().nullable().optional(),
  /** The customer portal's accent colour (docs/api/portal.md); absent in settings saved before it existed. */
  accent_color: z.string().nullable().optional(),
  /** The legal text a reverse-charged invoice's documents show (docs/api/taxes.md#documents); null or absent: the default text. */
  reverse_charge_text: z.string().nullable().optional(),
});

/** Invoice email (docs/api/billing.md#billing-settings-and-dunning, ADR 0067): sent by billing over SMTP_URL when enabled. */
export const emailSettingsSchema = z.object({
  enabled: z.boolean(),
  from: z.string().nullable(),
  reply_to: z.string().nullable(),
  bcc: z.string().nullable(),
});
export type EmailSettings = z.infer<typeof emailSettingsSchema>;

/** Tax (docs/api/taxes.md#settings): off by default; `secret` is never answered (`secret_set` says whether one is kept). */
export const TAX_ROUNDINGS = ['LINE', 'TOTAL'] as const;
export const TAX_PROVIDERS = ['BUILT_IN', 'HTTP'] as const;
export const taxSettingsSchema = z.object({
  enabled: z.boolean(),
  default_behavior: z.enum(TAX_BEHAVIORS),
  rounding: z.enum(TAX_ROUNDINGS),
  reverse_charge: z.object({ enabled: z.boolean(), seller_country: z.string().nullable() }),
  provider: z.enum(TAX_PROVIDERS),
  url: z.string().nullable(),
  secret_set: z.boolean(),
});
export type TaxSettingsView = z.infer<typeof taxSettingsSchema>;
/** As stored: the secret itself instead of `secret_set`. */
export type TaxSettings = Omit<TaxSettingsView, 'secret_set'> & { secret: string | null };
export const TAX_DEFAULTS: TaxSettings = {
  enabled: false,
  default_behavior: 'exclusive',
  rounding: 'LINE',
  reverse_charge: { enabled: false, seller_country: null },
  provider: 'BUILT_IN',
  url: null,
  secret: null,
};

/**
 * The customer portal (docs/api/portal.md#framing, ADR 0069): the https origins that may show it
 * in an iframe, snapshotted onto each portal session when it is opened; none by default.
 */
export const portalSettingsSchema = z.object({ frame_ancestors: z.array(z.string()) });
export type PortalSettings = z.infer<typeof portalSettingsSchema>;
export const PORTAL_SETTINGS_DEFAULTS: PortalSettings = { frame_ancestors: [] };
/** At most this many frame ancestors. */
export const MAX_PORTAL_FRAME_ANCESTORS = 10;
/** A frame ancestor: an https origin (scheme, host, optional port; no path, query or wildcard). */
export const HTTPS_ORIGIN = /^https:\/\/[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?$/i;

export const EMAIL_DEFAULTS: EmailSettings = { enabled: false, from: null, reply_to: null, bcc: null };

export const DUNNING_DEFAULTS: DunningSettings = { enabled: false, retry_schedule_days: [1, 3, 7], max_attempts: 3, provider: null };

export const billingSettingsSchema = z
  .object({
    dunning: dunningSettingsSchema,
    invoice_settings: invoiceSettingsSchema.nullable(),
    email: emailSettingsSchema,
    tax: taxSettingsSchema,
    portal: portalSettingsSchema,
    version: z.number().int(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'BillingSettings' });
export type BillingSettingsResponse = z.infer<typeof billingSettingsSchema>;

/** One address, `billing@example.com` (no display name, no list). */
const address = z.email({ error: 'must be an email address like billing@example.com' }).max(254, 'must be at most 254 characters');

const countryCode = z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code in capitals, like "DE"');

const text = (max: number) => z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

/** `PUT /v1/settings/billing`: merges the objects it is given into the stored ones. */
export const updateBillingSettingsBody = z
  .strictObject({
    dunning: z
      .strictObject({
        enabled: z.boolean().optional(),
        retry_schedule_days: z
          .array(days)
          .min(1, 'needs at least one day')
          .max(20, 'at most 20 retries')
          .refine((d) => d.every((v, i) => i === 0 || v > d[i - 1]!), 'must be strictly ascending')
          .optional(),
        max_attempts: z.number().int('must be a whole number').min(1, 'must be between 1 and 20').max(20, 'must be between 1 and 20').optional(),
        provider: text(64).nullable().optional(),
      })
      .optional(),
    invoice_settings: z
      .strictObject({
        company_name: text(255).optional(),
        address: text(1000).optional(),
        logo_url: z
          .string()
          .max(2048, 'must be at most 2048 characters')
          .refine((u) => /^https:\/\/[^\s]+$/.test(u), 'must be an https URL')
          .nullable()
          .optional(),
        footer: z.string().max(1000, 'must be at most 1000 characters').nullable().optional(),
        tax_id: z.string().max(64, 'must be at most 64 characters').nullable().optional(),
        accent_color: z
          .string()
          .regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour')
          .nullable()
          .optional(),
        country: countryCode.nullable().optional(),
        reverse_charge_text: text(500).nullable().optional(),
      })
      .optional(),
    tax: z
      .strictObject({
        enabled: z.boolean().optional(),
        default_behavior: z.enum(TAX_BEHAVIORS, 'must be exclusive or inclusive').optional(),
        rounding: z.enum(TAX_ROUNDINGS, 'must be LINE or TOTAL').optional(),
        reverse_charge: z.strictObject({ enabled: z.boolean().optional(), seller_country: countryCode.nullable().optional() }).optional(),
        provider: z.enum(TAX_PROVIDERS, 'must be BUILT_IN or HTTP').optional(),
        url: z
          .string()
          .max(2048, 'must be at most 2048 characters')
          .refine((u) => /^https?:\/\/[^\s]+$/.test(u), 'must be an http(s) URL')
          .nullable()
          .optional(),
        secret: z.string().min(16, 'must be at least 16 characters').max(256, 'must be at most 256 characters').nullable().optional(),
      })
      .optional(),
    email: z
      .strictObject({
        enabled: z.boolean().optional(),
        from: address.nullable().optional(),
        reply_to: address.nullable().optional(),
        bcc: address.nullable().optional(),
      })
      .optional(),
    portal: z
      .strictObject({
        frame_ancestors: z
          .array(z.string().max(300, 'must be at most 300 characters').refine((o) => HTTPS_ORIGIN.test(o) && URL.canParse(o), 'must be an https origin like https://app.example.com (no path, no wildcard)'))
          .max(MAX_PORTAL_FRAME_ANCESTORS, `at most ${MAX_PORTAL_FRAME_ANCESTORS} origins`)
          .optional(),
      })
      .optional(),
  })
  .meta({ examples: [{ dunning: { enabled: true, retry_schedule_days: [1, 3, 7], max_attempts: 3, provider: 'stripe' } }] });
export type UpdateBillingSettingsBody = z.output<typeof updateBillingSettingsBody>;

export const settingsApi = {
  getBillingSettings: defineRoute({
    operationId: 'getBillingSettings',
    method: 'get',
    path: '/v1/settings/billing',
    service: 'billing',
    permission: 'settings:read',
    summary: "The billing settings of the caller's tenant and environment (defaults until set)",
    tag: 'Settings',
    response: billingSettingsSchema,
    status: 200,
  }),
  updateBillingSettings: defineRoute({
    operationId: 'updateBillingSettings',
    method: 'put',
    path: '/v1/settings/billing',
    service: 'billing',
    permission: 'settings:write',
    summary: 'Merge dunning, invoice, email, tax and portal settings into the stored ones (email enabled needs `from`)',
    tag: 'Settings',
    body: updateBillingSettingsBody,
    response: billingSettingsSchema,
    status: 200,
  }),
};

export const settingsRoutes: RouteDef[] = Object.values(settingsApi) as RouteDef[];
