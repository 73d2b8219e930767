import { z } from 'zod';
import { listResponse, metadataSchema, paginationQuery } from '../common';
import { defineRoute, type RouteDef } from '../routes';
import { BILLING_PERIODS, MAX_DECIMALS } from './prices';

/** Credit grants (docs/api/credit-grants.md, issue #31): credits a plan or a subscription puts in the payer's PRE_PAID wallet. */
export const CREDIT_GRANT_CADENCES = ['ONETIME', 'RECURRING'] as const;
export const CREDIT_GRANT_STATUSES = ['active', 'archived'] as const;
export const CREDIT_GRANT_APPLICATION_STATUSES = ['applied', 'skipped', 'pending'] as const;
export type CreditGrantCadence = (typeof CREDIT_GRANT_CADENCES)[number];
export type CreditGrantStatus = (typeof CREDIT_GRANT_STATUSES)[number];
export type CreditGrantApplicationStatus = (typeof CREDIT_GRANT_APPLICATION_STATUSES)[number];

const id = z.string().min(1).max(255);
const idParams = z.strictObject({ id });

/** A decimal string above 0 with at most 12 decimals ("100", "0.5"). */
const positiveDecimal = z
  .string()
  .regex(/^-?(0|[1-9]\d{0,27})(\.\d+)?$/, 'must be a decimal number written as a string, e.g. "100"')
  .refine((v) => !v.startsWith('-') && /[1-9]/.test(v), 'must be greater than 0')
  .refine((v) => (v.split('.')[1]?.length ?? 0) <= MAX_DECIMALS, `has more than ${MAX_DECIMALS} decimals`);

export const createCreditGrantBody = z
  .strictObject({
    plan_id: id.optional(),
    subscription_id: id.optional(),
    name: z.string().min(1, 'must not be empty').max(255),
    credits: positiveDecimal,
    cadence: z.enum(CREDIT_GRANT_CADENCES, 'must be ONETIME or RECURRING'),
    /** The grant's period (RECURRING); default: the subscription's billing period. */
    period: z.enum(BILLING_PERIODS).optional(),
    /** Days after the period start at which the credits expire; null or absent: never. */
    expire_in_days: z.number().int('must be a whole number of days').min(1, 'must be 1 or more').max(36_500).nullable().optional(),
    priority: z.number().int('must be an integer').min(0, 'must be 0 or more').max(2_147_483_647).optional(),
    /** The rate of a PRE_PAID wallet the grant creates (an existing wallet keeps its own); default "1". */
    conversion_rate: positiveDecimal.optional(),
    metadata: metadataSchema.optional(),
  })
  .superRefine((v, ctx) => {
    if ((v.plan_id === undefined) === (v.subscription_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['plan_id'], message: 'exactly one of plan_id and subscription_id is required' });
    }
    if (v.cadence === 'ONETIME' && v.period !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['period'], message: 'applies to RECURRING grants only' });
    }
  })
  .meta({ examples: [{ plan_id: 'plan_01JDQ8Z6Y4K2M9N3P5R7T9V1X3', name: 'Monthly included credits', credits: '100', cadence: 'RECURRING', expire_in_days: 30, priority: 1 }] });
export type CreateCreditGrantBody = z.output<typeof createCreditGrantBody>;

export const listCreditGrantsQuery = z.strictObject({
  ...paginationQuery,
  plan_id: id.optional(),
  subscription_id: id.optional(),
  status: z.enum(CREDIT_GRANT_STATUSES).optional(),
});
export type ListCreditGrantsQuery = z.output<typeof listCreditGrantsQuery>;

export const listCreditGrantApplicationsQuery = z.strictObject({
  ...paginationQuery,
  subscription_id: id.optional(),
  status: z.enum(CREDIT_GRANT_APPLICATION_STATUSES).optional(),
});
export type ListCreditGrantApplicationsQuery = z.output<typeof listCreditGrantApplicationsQuery>;

export const creditGrantSchema = z.object({
  id: z.string(),
  plan_id: z.string().nullable(),
  subscription_id: z.string().nullable(),
  name: z.string(),
  credits: z.string(),
  cadence: z.enum(CREDIT_GRANT_CADENCES),
  /** Null: the subscription's billing period (or ONETIME). */
  period: z.enum(BILLING_PERIODS).nullable(),
  expire_in_days: z.number().int().nullable(),
  priority: z.number().int().nullable(),
  conversion_rate: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  status: z.enum(CREDIT_GRANT_STATUSES),
  archived_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
});

export const creditGrantApplicationSchema = z.object({
  id: z.string(),
  credit_grant_id: z.string(),
  subscription_id: z.string(),
  customer_id: z.string(),
  period_start: z.string(),
  period_end: z.string(),
  credits: z.string(),
  currency: z.string(),
  status: z.enum(CREDIT_GRANT_APPLICATION_STATUSES),
  /** Why nothing was credited (`expired`, `customer_deleted`); null unless skipped. */
  skip_reason: z.string().nullable(),
  expiry_date: z.string().nullable(),
  priority: z.number().int().nullable(),
  idempotency_key: z.string(),
  wallet_id: z.string().nullable(),
  wallet_transaction_id: z.string().nullable(),
  applied_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** Credit grants (issue #31), owned by the billing service. */
export const creditGrantApi = {
  createCreditGrant: defineRoute({
    operationId: 'createCreditGrant',
    method: 'post',
    path: '/v1/credit_grants',
    service: 'billing',
    permission: 'credit_grants:write',
    summary: "Grant credits on a plan (its subscriptions from now on) or on one subscription, once or every period, to the payer's PRE_PAID wallet",
    tag: 'Credit grants',
    body: createCreditGrantBody,
    response: creditGrantSchema,
    status: 201,
    errors: [404],
  }),
  listCreditGrants: defineRoute({
    operationId: 'listCreditGrants',
    method: 'get',
    path: '/v1/credit_grants',
    service: 'billing',
    permission: 'credit_grants:read',
    summary: 'List credit grants, oldest first, by plan, subscription or status',
    tag: 'Credit grants',
    query: listCreditGrantsQuery,
    response: listResponse(creditGrantSchema),
    status: 200,
  }),
  getCreditGrant: defineRoute({
    operationId: 'getCreditGrant',
    method: 'get',
    path: '/v1/credit_grants/:id',
    service: 'billing',
    permission: 'credit_grants:read',
    summary: 'One credit grant',
    tag: 'Credit grants',
    params: idParams,
    response: creditGrantSchema,
    status: 200,
    errors: [404],
  }),
  archiveCreditGrant: defineRoute({
    operationId: 'archiveCreditGrant',
    method: 'delete',
    path: '/v1/credit_grants/:id',
    service: 'billing',
    permission: 'credit_grants:write',
    summary: 'Archive a credit grant: no period starts to grant from now on; credits given stay',
    tag: 'Credit grants',
    params: idParams,
    status: 204,
    errors: [404],
  }),
  listCreditGrantApplications: defineRoute({
    operationId: 'listCreditGrantApplications',
    method: 'get',
    path: '/v1/credit_grants/:id/applications',
    service: 'billing',
    permission: 'credit_grants:read',
    summary: 'The periods a grant gave credits for (or skipped, or will credit once the wallet service answers), oldest period first',
    tag: 'Credit grants',
    params: idParams,
    query: listCreditGrantApplicationsQuery,
    response: listResponse(creditGrantApplicationSchema),
    status: 200,
    errors: [404],
  }),
};

export const creditGrantRoutes: RouteDef[] = Object.values(creditGrantApi) as RouteDef[];
