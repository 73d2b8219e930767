import { z } from 'zod';
import { metadataSchema, taxRateIdsSchema } from '../common';
import { planPriceBody } from './prices';

/** Edge validation of plan requests (docs/api/billing.md#plans); beside the price schemas they embed. */
export const createPlanBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(255),
  lookup_key: z.string().min(1).max(255).optional(),
  description: z.string().max(1000).optional(),
  metadata: metadataSchema.optional(),
  prices: z.array(planPriceBody).max(100, 'at most 100 prices per request').optional(),
  /** The rates its lines bear when their price names none (docs/api/taxes.md#which-rates-a-line-bears). */
  tax_rate_ids: taxRateIdsSchema.optional(),
});

/** `PUT /v1/plans/{id}`: name, description and metadata only; prices never change (a change is a new price). */
export const updatePlanBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(255).optional(),
  description: z.string().max(1000).nullable().optional(),
  metadata: metadataSchema.optional(),
  /** A change moves drafts only: finalized invoices keep the rates they bore. */
  tax_rate_ids: taxRateIdsSchema.optional(),
});

export type CreatePlanBody = z.output<typeof createPlanBody>;
export type UpdatePlanBody = z.output<typeof updatePlanBody>;
