import { z } from 'zod';
import { listResponse, paginationQuery } from '../common';
import { defineRoute, type RouteDef } from '../routes';

/** Tax rates (docs/api/taxes.md, ADR 0065): request and response schemas and routes. */
export const TAX_TYPES = ['VAT', 'GST', 'SALES_TAX', 'OTHER'] as const;
export type TaxType = (typeof TAX_TYPES)[number];

/** A percentage in [0, 100] with at most 4 decimals, as a string ("20", "7.25"). */
export const taxPercentage = z
  .string({ error: 'must be a decimal string like "20" or "7.25"' })
  .regex(/^(0|[1-9]\d?|100)(\.\d{1,4})?$/, 'must be a decimal string in [0, 100] with at most 4 decimals, like "20" or "7.25"')
  .refine((v) => Number(v) <= 100, 'must be at most 100');

const country = z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code in capitals, like "DE"');
const region = z.string().regex(/^[A-Z]{2}-[A-Z0-9]{1,3}$/, 'must be an ISO 3166-2 subdivision code, like "US-CA"');
const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

export const createTaxRateBody = z
  .strictObject({
    code: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, "_", "." or "-"'),
    name: text(255),
    percentage: taxPercentage,
    tax_type: z.enum(TAX_TYPES),
    country: country.optional(),
    region: region.optional(),
    description: z.string().max(1000, 'must be at most 1000 characters').optional(),
  })
  .superRefine((body, ctx) => {
    if (body.region !== undefined && body.country === undefined) ctx.addIssue({ code: 'custom', path: ['region'], message: 'needs country' });
    if (body.region !== undefined && body.country !== undefined && !body.region.startsWith(`${body.country}-`)) {
      ctx.addIssue({ code: 'custom', path: ['region'], message: `must be a subdivision of ${body.country} (start with "${body.country}-")` });
    }
  })
  .meta({ examples: [{ code: 'DE_VAT_19', name: 'Umsatzsteuer 19 %', percentage: '19', tax_type: 'VAT', country: 'DE' }] });
export type CreateTaxRateBody = z.output<typeof createTaxRateBody>;

/** `PUT /v1/tax_rates/{id}`: name and description only (a new percentage is a new rate, so finalized invoices never move). */
export const updateTaxRateBody = z.strictObject({
  name: text(255).optional(),
  description: z.string().max(1000, 'must be at most 1000 characters').nullable().optional(),
});
export type UpdateTaxRateBody = z.output<typeof updateTaxRateBody>;

const boolQuery = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');

export const listTaxRatesQuery = z.strictObject({
  ...paginationQuery,
  country: country.optional(),
  active: boolQuery.optional(),
});

export const taxRateSchema = z
  .object({
    id: z.string(),
    code: z.string(),
    name: z.string(),
    percentage: z.string(),
    tax_type: z.enum(TAX_TYPES),
    country: z.string().nullable(),
    region: z.string().nullable(),
    description: z.string().nullable(),
    active: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'TaxRate' });
export type TaxRateResponse = z.infer<typeof taxRateSchema>;

const idParams = z.strictObject({ id: z.string().min(1).max(255) });

export const taxRateApi = {
  createTaxRate: defineRoute({
    operationId: 'createTaxRate',
    method: 'post',
    path: '/v1/tax_rates',
    service: 'billing',
    permission: 'taxes:write',
    summary: 'Create a tax rate (its code unique in the environment)',
    tag: 'Taxes',
    body: createTaxRateBody,
    response: taxRateSchema,
    status: 201,
    errors: [409],
  }),
  listTaxRates: defineRoute({
    operationId: 'listTaxRates',
    method: 'get',
    path: '/v1/tax_rates',
    service: 'billing',
    permission: 'taxes:read',
    summary: 'List tax rates, oldest first, by country or active',
    tag: 'Taxes',
    query: listTaxRatesQuery,
    response: listResponse(taxRateSchema),
    status: 200,
  }),
  getTaxRate: defineRoute({
    operationId: 'getTaxRate',
    method: 'get',
    path: '/v1/tax_rates/:id',
    service: 'billing',
    permission: 'taxes:read',
    summary: 'One tax rate',
    tag: 'Taxes',
    params: idParams,
    response: taxRateSchema,
    status: 200,
    errors: [404],
  }),
  updateTaxRate: defineRoute({
    operationId: 'updateTaxRate',
    method: 'put',
    path: '/v1/tax_rates/:id',
    service: 'billing',
    permission: 'taxes:write',
    summary: 'Rename a tax rate or change its description (its percentage is fixed)',
    tag: 'Taxes',
    params: idParams,
    body: updateTaxRateBody,
    response: taxRateSchema,
    status: 200,
    errors: [404],
  }),
  archiveTaxRate: defineRoute({
    operationId: 'archiveTaxRate',
    method: 'delete',
    path: '/v1/tax_rates/:id',
    service: 'billing',
    permission: 'taxes:write',
    summary: 'Archive a tax rate (active: false); drafts stop bearing it, finalized invoices keep it',
    tag: 'Taxes',
    params: idParams,
    response: taxRateSchema,
    status: 200,
    errors: [404],
  }),
};

export const taxRateRoutes: RouteDef[] = Object.values(taxRateApi) as RouteDef[];
