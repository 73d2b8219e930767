import { z } from 'zod';
import { defineRoute } from '../routes';
import { meterUsageBody } from '../usage-events';

/**
 * Internal endpoint of the ingestion-aggregator that the billing service calls to read the usage
 * of many customers and meters at once (the period job prices a batch of subscriptions with one
 * call instead of one call per customer and meter). NOT in ALL_ROUTES: the gateway does not route
 * it and the OpenAPI document does not show it. Mounted like the public routes, behind the
 * internal token and tenant headers; `permission` and `tag` are kept for the route shape only.
 */

/** One query: the fields of `POST /v1/meters/{id}/usage` (no window_size) plus the meter id. */
export const usageBatchQuery = z.strictObject({
  meter_id: z.string().min(1).max(255),
  external_customer_id: meterUsageBody.shape.external_customer_id,
  start_time: meterUsageBody.shape.start_time,
  end_time: meterUsageBody.shape.end_time,
  filter_values: meterUsageBody.shape.filter_values,
});

export const usageBatchBody = z.strictObject({
  queries: z
    .array(usageBatchQuery)
    .min(1, 'must hold at least one query')
    .max(1000, 'must hold at most 1000 queries')
    .superRefine((queries, ctx) => {
      queries.forEach((q, i) => {
        if (Date.parse(q.end_time) <= Date.parse(q.start_time)) ctx.addIssue({ code: 'custom', path: [i, 'end_time'], message: 'must be after start_time' });
      });
    }),
});

/** The values in the order of the queries, each exactly as `POST /v1/meters/{id}/usage` answers its `value`. */
export const usageBatchResponse = z.object({
  values: z.array(z.object({ meter_id: z.string(), external_customer_id: z.string(), value: z.string() })),
});

export const ingestionInternalApi = {
  usageBatch: defineRoute({
    operationId: 'internalUsageBatch',
    method: 'post',
    path: '/internal/v1/usage/batch',
    service: 'ingestion-aggregator',
    permission: 'meters:read',
    summary: 'The usage of many customers and meters over time ranges, in one call (billing)',
    tag: 'Internal',
    body: usageBatchBody,
    response: usageBatchResponse,
    status: 200,
    errors: [404],
  }),
};
