import { TOPICS, type Bus, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { domainEventSchema, snapshotEntitlementSchema, snapshotFeatureSchema, snapshotSubscriptionSchema, type Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { idempotentBatchHandler, RESOURCE_VERSION_HEADER } from '@billstream/outbox';
import { recordProjection } from '@billstream/observability';
import { z } from 'zod';
import type { EntitlementRecord, FeatureRecord, ProjectionStore, SubscriptionRecord } from './store';

export const BILLING_EVENTS_GROUP = 'entitlements.billing-events';
export const CUSTOMER_EVENTS_GROUP = 'entitlements.customers';

/** What the check's cache must forget once a batch committed. */
export interface ProjectionChanges {
  /** Features or entitlements of these scopes changed. */
  scopes: Scope[];
  /** Subscriptions or the record of these customers changed. */
  customers: Array<{ scope: Scope; customerId: string }>;
}

/** Tells the check's cache (and, through it, the other replicas; ADR 0025) of committed changes. */
export interface ProjectionListener {
  changed(changes: ProjectionChanges): void;
}

type BillingChange = ({ kind: 'feature'; record: FeatureRecord } | { kind: 'entitlement'; record: EntitlementRecord } | { kind: 'subscription'; record: SubscriptionRecord }) & { occurredAt: string } | null;

/** What a batch changed, with what the metrics count once it committed (`recordProjection`). */
type Applied = ProjectionChanges & { applied: Record<string, number>; occurredAt: string[] };

const payloadOf = <T extends z.ZodType>(schema: T, key: string) => z.object({ payload: z.object({ [key]: schema }) });
const featureEvent = payloadOf(snapshotFeatureSchema.omit({ version: true }), 'feature');
const entitlementEvent = payloadOf(snapshotEntitlementSchema.omit({ version: true }), 'entitlement');
const subscriptionEvent = payloadOf(snapshotSubscriptionSchema.omit({ version: true }), 'subscription');

/**
 * A billing event the projection applies: a feature, entitlement or subscription event with its
 * version (the `resource-version` header, ADR 0061); anything else (invoices, payments, or an
 * event published before versions travelled, which the seed covers) is skipped.
 */
export function billingChangeOf(message: ConsumedMessage): BillingChange {
  const event = domainEventSchema.parse(JSON.parse(message.value));
  const header = message.headers[RESOURCE_VERSION_HEADER];
  if (header === undefined || !/^\d+$/.test(header)) return null;
  const version = Number(header);
  const [resource] = event.type.split('.');
  if (resource === 'feature' && event.type !== 'feature.wallet_balance.alert') {
    return { kind: 'feature', record: { ...featureEvent.parse(event).payload.feature, version } as FeatureRecord, occurredAt: event.occurred_at };
  }
  if (resource === 'entitlement') {
    return { kind: 'entitlement', record: { ...entitlementEvent.parse(event).payload.entitlement, version, deleted: event.type === 'entitlement.deleted' } as EntitlementRecord, occurredAt: event.occurred_at };
  }
  if (resource === 'subscription') return { kind: 'subscription', record: { ...subscriptionEvent.parse(event).payload.subscription, version } as SubscriptionRecord, occurredAt: event.occurred_at };
  return null;
}

const scopeOf = (r: { tenant_id: string; environment_id: string }): Scope => ({ tenantId: r.tenant_id, environmentId: r.environment_id });

/** Applies feature, entitlement and subscription records (events or the seed's pages), answering what changed. */
export async function applyRecords(
  trx: Parameters<ProjectionStore['putFeatures']>[0],
  store: ProjectionStore,
  records: { features: FeatureRecord[]; entitlements: EntitlementRecord[]; subscriptions: SubscriptionRecord[] },
): Promise<ProjectionChanges & { applied: Record<string, number> }> {
  const features = await store.putFeatures(trx, records.features);
  const entitlements = await store.putEntitlements(trx, records.entitlements);
  const subscriptions = await store.putSubscriptions(trx, records.subscriptions);
  return {
    scopes: [...features, ...entitlements].map(scopeOf),
    customers: subscriptions.map((s) => ({ scope: scopeOf(s), customerId: s.customer_id })),
    applied: { feature: features.length, entitlement: entitlements.length, subscription: subscriptions.length },
  };
}

/** The projection of billing-events: each batch in one transaction, each message once (ADR 0061). */
export function subscribeBillingEvents(db: Db, bus: Bus, store: ProjectionStore, listener: ProjectionListener, logger: Logger): Promise<Subscription> {
  const handler = idempotentBatchHandler<BillingChange, Applied>({
    db,
    group: BILLING_EVENTS_GROUP,
    logger,
    // Only feature, entitlement and subscription events carry a version; invoices, payments and
    // the rest of a close's events are skipped unparsed and unrecorded.
    relevant: (message) => message.headers[RESOURCE_VERSION_HEADER] !== undefined,
    parse: billingChangeOf,
    handle: async (trx, changes) => {
      const of = <K extends 'feature' | 'entitlement' | 'subscription'>(kind: K) => changes.flatMap((c) => (c?.kind === kind ? [c.record] : [])) as never[];
      const applied = await applyRecords(trx, store, { features: of('feature'), entitlements: of('entitlement'), subscriptions: of('subscription') });
      return { ...applied, occurredAt: changes.flatMap((c) => (c ? [c.occurredAt] : [])) };
    },
    afterCommit: (changes) => {
      recordProjection(changes.applied, changes.occurredAt);
      listener.changed(changes);
    },
  });
  return bus.subscribe({ groupId: BILLING_EVENTS_GROUP, topics: [TOPICS.billingEvents], joinPartitions: true, handler });
}

const customerEvent = domainEventSchema.extend({
  payload: z.object({ customer: z.object({ id: z.string(), external_id: z.string(), tenant_id: z.string().optional(), environment_id: z.string().optional() }) }),
});
type CustomerEvent = z.infer<typeof customerEvent>;

/** The customer projection (id <-> external id, deletion) from customer-events; a deleted customer is never revived. */
export function subscribeCustomerEvents(db: Db, bus: Bus, store: ProjectionStore, listener: ProjectionListener, clock: () => Date, logger: Logger): Promise<Subscription> {
  const handler = idempotentBatchHandler<CustomerEvent, Applied>({
    db,
    group: CUSTOMER_EVENTS_GROUP,
    logger,
    parse: (message) => customerEvent.parse(JSON.parse(message.value)),
    async handle(trx, events) {
      const customers: ProjectionChanges['customers'] = [];
      for (const event of events) {
        const { customer } = event.payload;
        const scope = { tenantId: customer.tenant_id ?? event.tenant_id, environmentId: customer.environment_id ?? event.environment_id };
        if (event.type === 'customer.deleted') await store.markDeleted(trx, scope, customer.id, customer.external_id, clock());
        else await store.remember(trx, scope, customer.id, customer.external_id, clock());
        customers.push({ scope, customerId: customer.id });
      }
      return { scopes: [], customers, applied: { customer: customers.length }, occurredAt: events.map((e) => e.occurred_at) };
    },
    afterCommit: (changes) => {
      recordProjection(changes.applied, changes.occurredAt);
      listener.changed(changes);
    },
  });
  return bus.subscribe({ groupId: CUSTOMER_EVENTS_GROUP, topics: [TOPICS.customerEvents], joinPartitions: true, handler });
}
