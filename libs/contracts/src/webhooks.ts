import { z } from 'zod';
import { listResponse, paginationQuery, paginationSchema, queryBoolean } from './common';
import { WEBHOOK_EVENT_NAMES } from './domain-event';
import { defineRoute, type RouteDef } from './routes';

/** A subscribable name: one of the spec's event names, or `*` for all of them. */
export const webhookEventSelector = z.enum(['*', ...WEBHOOK_EVENT_NAMES], {
  error: () => `must be "*" or one of the event names: ${WEBHOOK_EVENT_NAMES.join(', ')}`,
});

const webhookUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine((v) => URL.canParse(v), 'must be an absolute URL');

const webhookEvents = z
  .array(webhookEventSelector)
  .min(1, 'needs at least one event name or "*"')
  .max(100, 'at most 100 event names')
  .transform((names) => [...new Set(names)]);

const webhookDescription = z.string().max(1000, 'must be at most 1000 characters');

export const createWebhookEndpointBody = z.strictObject({
  url: webhookUrl,
  events: webhookEvents,
  enabled: z.boolean().default(true),
  description: webhookDescription.optional(),
});

export const updateWebhookEndpointBody = z.strictObject({
  url: webhookUrl.optional(),
  events: webhookEvents.optional(),
  enabled: z.boolean().optional(),
  description: webhookDescription.nullable().optional(),
});

export const testWebhookEndpointBody = z.strictObject({
  event_name: z.enum(WEBHOOK_EVENT_NAMES, {
    error: () => `must be one of the event names: ${WEBHOOK_EVENT_NAMES.join(', ')}`,
  }),
});

export const webhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  description: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookEndpointView = z.infer<typeof webhookEndpointSchema>;

/** The create response: the endpoint plus its signing secret, shown this once. */
export const createdWebhookEndpointSchema = webhookEndpointSchema.extend({ secret: z.string() });

export const webhookDeliverySchema = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string(),
  event_name: z.string(),
  attempt: z.number().int(),
  status: z.enum(['succeeded', 'failed']),
  response_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  attempted_at: z.string(),
  retry_at: z.string().nullable(),
});
export type WebhookDeliveryView = z.infer<typeof webhookDeliverySchema>;

export const webhookEndpointParams = z.strictObject({ id: z.string().min(1).max(64) });

export const webhookDeliveryParams = z.strictObject({ id: z.string().min(1).max(64), delivery_id: z.string().min(1).max(64) });

export const listWebhookEndpointsQuery = z.strictObject({
  ...paginationQuery,
  enabled: queryBoolean.optional(),
});

export const listWebhookDeliveriesQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(['succeeded', 'failed']).optional(),
  event_id: z.string().min(1).max(64).optional(),
});

export const webhookFailuresQuery = z.strictObject({
  hours: z.coerce.number().int('must be a whole number of hours').min(1, 'must be 1 or more').max(720, 'must be at most 720 (30 days)').default(24),
});

export const webhookFailuresSchema = z.object({
  since: z.string(),
  failed_attempts: z.number().int(),
  endpoints: z.array(
    z.object({
      endpoint_id: z.string(),
      url: z.string(),
      failed_attempts: z.number().int(),
      last_failed_at: z.string(),
      last_error: z.string().nullable(),
    }),
  ),
});

export const webhookApi = {
  create: defineRoute({
    operationId: 'createWebhookEndpoint',
    method: 'post',
    path: '/v1/webhook-endpoints',
    service: 'webhook-dispatcher',
    permission: 'webhooks:write',
    summary: 'Create a webhook endpoint; its signing secret is shown this once',
    tag: 'Webhooks',
    body: createWebhookEndpointBody,
    response: createdWebhookEndpointSchema,
    status: 201,
  }),
  list: defineRoute({
    operationId: 'listWebhookEndpoints',
    method: 'get',
    path: '/v1/webhook-endpoints',
    service: 'webhook-dispatcher',
    permission: 'webhooks:read',
    summary: 'List the webhook endpoints of the caller environment, oldest first',
    tag: 'Webhooks',
    query: listWebhookEndpointsQuery,
    response: listResponse(webhookEndpointSchema),
    status: 200,
  }),
  get: defineRoute({
    operationId: 'getWebhookEndpoint',
    method: 'get',
    path: '/v1/webhook-endpoints/:id',
    service: 'webhook-dispatcher',
    permission: 'webhooks:read',
    summary: 'Get one webhook endpoint (without its secret)',
    tag: 'Webhooks',
    params: webhookEndpointParams,
    response: webhookEndpointSchema,
    status: 200,
    errors: [404],
  }),
  update: defineRoute({
    operationId: 'updateWebhookEndpoint',
    method: 'put',
    path: '/v1/webhook-endpoints/:id',
    service: 'webhook-dispatcher',
    permission: 'webhooks:write',
    summary: 'Update a webhook endpoint (any of url, events, enabled, description; If-Match honoured)',
    tag: 'Webhooks',
    params: webhookEndpointParams,
    body: updateWebhookEndpointBody,
    response: webhookEndpointSchema,
    status: 200,
    errors: [404, 409],
  }),
  delete: defineRoute({
    operationId: 'deleteWebhookEndpoint',
    method: 'delete',
    path: '/v1/webhook-endpoints/:id',
    service: 'webhook-dispatcher',
    permission: 'webhooks:write',
    summary: 'Delete a webhook endpoint; its planned retries and delivery records go with it',
    tag: 'Webhooks',
    params: webhookEndpointParams,
    status: 204,
    errors: [404],
  }),
  test: defineRoute({
    operationId: 'testWebhookEndpoint',
    method: 'post',
    path: '/v1/webhook-endpoints/:id/test',
    service: 'webhook-dispatcher',
    permission: 'webhooks:write',
    summary: 'Send a test envelope to the endpoint now and return its delivery record',
    tag: 'Webhooks',
    params: webhookEndpointParams,
    body: testWebhookEndpointBody,
    response: webhookDeliverySchema,
    status: 200,
    errors: [404],
  }),
  deliveries: defineRoute({
    operationId: 'listWebhookDeliveries',
    method: 'get',
    path: '/v1/webhook-endpoints/:id/deliveries',
    service: 'webhook-dispatcher',
    permission: 'webhooks:read',
    summary: 'List the delivery attempts of an endpoint, newest first',
    tag: 'Webhooks',
    params: webhookEndpointParams,
    query: listWebhookDeliveriesQuery,
    response: z.object({ deliveries: z.array(webhookDeliverySchema), pagination: paginationSchema }),
    status: 200,
    errors: [404],
  }),
  failures: defineRoute({
    operationId: 'getWebhookFailures',
    method: 'get',
    path: '/v1/reports/webhook_failures',
    service: 'webhook-dispatcher',
    permission: 'webhooks:read',
    summary: 'Failed delivery attempts of the last `hours` (default 24): their count, and the 20 endpoints with the most, counted by the database',
    tag: 'Webhooks',
    query: webhookFailuresQuery,
    response: webhookFailuresSchema,
    status: 200,
  }),
  resend: defineRoute({
    operationId: 'resendWebhookDelivery',
    method: 'post',
    path: '/v1/webhook-endpoints/:id/deliveries/:delivery_id/resend',
    service: 'webhook-dispatcher',
    permission: 'webhooks:write',
    summary: "Send a delivery's event again now, as a new attempt (same envelope bytes, signed as usual), and return that attempt's record",
    tag: 'Webhooks',
    params: webhookDeliveryParams,
    body: z.strictObject({}),
    response: webhookDeliverySchema,
    status: 200,
    errors: [404],
  }),
};

/** Webhook endpoints and deliveries (issue #6). */
export const webhookRoutes: RouteDef[] = Object.values(webhookApi) as RouteDef[];
