import { usageEventApi, usageEventInput, type UsageEventInput } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { toValidationError, type RouteHandler } from '@billstream/http';
import type { GatewayHandlers } from '../handlers';
import { toMessage, type UsageEventPublisher } from './publisher';

const { ingest: ingestRoute, ingestBulk: bulkRoute } = usageEventApi;

/** Validates every event of a bulk request; the first bad one refuses the whole request. */
export function validateBulk(events: unknown[]): UsageEventInput[] {
  return events.map((event, index) => {
    const result = usageEventInput.safeParse(event);
    if (result.success) return result.data;
    const issues = toValidationError(result.error).details?.issues as Array<{ field: string; message: string }>;
    const first = issues[0] ?? { field: '', message: 'is invalid' };
    const field = first.field ? `events.${index}.${first.field}` : `events.${index}`;
    throw new ValidationError(`Body is invalid: ${field} ${first.message}`, {
      field,
      index,
      event_field: first.field,
      issues,
    });
  });
}

export function eventHandlers(publisher: UsageEventPublisher): GatewayHandlers {
  const ingest: RouteHandler<typeof ingestRoute> = async ({ body, ctx }) => {
    const message = toMessage(body, ctx, new Date().toISOString());
    await publisher.publish([message]);
    return { message: 'Event accepted for processing', event_id: message.event_id };
  };
  const ingestBulk: RouteHandler<typeof bulkRoute> = async ({ body, ctx }) => {
    const events = validateBulk(body.events);
    const receivedAt = new Date().toISOString();
    const messages = events.map((e) => toMessage(e, ctx, receivedAt));
    await publisher.publish(messages);
    return { message: `${messages.length} events accepted for processing`, event_ids: messages.map((m) => m.event_id) };
  };
  return {
    [ingestRoute.operationId]: ingest,
    [bulkRoute.operationId]: ingestBulk,
  } as GatewayHandlers;
}
