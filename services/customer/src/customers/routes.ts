import type { Express } from 'express';
import {
  customerApi,
  type CreateCustomerBody,
  type CustomerResponse,
  type ListCustomersQuery,
  type Scope,
  type UpdateCustomerBody,
} from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute, type RequestContext } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Customer, CustomerAddress, CustomerListQuery } from './customer';
import type { CustomerChanges, CustomerService, NewCustomer } from './service';
import { toCustomerView } from './view';

type AddressInput = Pick<
  CreateCustomerBody,
  'address_line1' | 'address_line2' | 'address_city' | 'address_state' | 'address_postal_code' | 'address_country'
>;

function addressOf(b: AddressInput): Partial<CustomerAddress> {
  return {
    line1: b.address_line1,
    line2: b.address_line2,
    city: b.address_city,
    state: b.address_state,
    postalCode: b.address_postal_code,
    country: b.address_country,
  };
}

function newCustomerOf(b: CreateCustomerBody): NewCustomer {
  const a = addressOf(b);
  return {
    externalId: b.external_customer_id,
    name: b.name ?? null,
    email: b.email ?? null,
    address: {
      line1: a.line1 ?? null,
      line2: a.line2 ?? null,
      city: a.city ?? null,
      state: a.state ?? null,
      postalCode: a.postalCode ?? null,
      country: a.country ?? null,
    },
    taxIds: b.tax_ids ?? [],
    taxExempt: b.tax_exempt ?? 'none',
    taxRateIds: b.tax_rate_ids ?? [],
    parentCustomerId: b.parent_customer_id ?? null,
    metadata: b.metadata ?? {},
    status: b.status ?? 'published',
  };
}

function changesOf(b: UpdateCustomerBody): CustomerChanges {
  return {
    externalId: b.external_customer_id,
    name: b.name,
    email: b.email,
    address: addressOf(b),
    taxIds: b.tax_ids,
    taxExempt: b.tax_exempt,
    taxRateIds: b.tax_rate_ids,
    parentCustomerId: b.parent_customer_id,
    metadata: b.metadata,
    status: b.status,
  };
}

function listQueryOf(q: ListCustomersQuery): CustomerListQuery {
  const nonEmpty = (ids?: string[]) => (ids && ids.length > 0 ? ids : undefined);
  return {
    filter: {
      status: q.status,
      ids: nonEmpty(q.customer_ids),
      externalIds: nonEmpty(q.external_ids),
      externalId: q.external_id,
      email: q.email,
      parentIds: nonEmpty(q.parent_customer_ids),
    },
    sort: q.sort,
    order: q.order,
    limit: q.limit,
    offset: q.offset,
  };
}

const scopeOf = (ctx: RequestContext): Scope => ({ tenantId: ctx.tenantId, environmentId: ctx.environmentId });
const eventContextOf = (ctx: RequestContext) => ({ ...scopeOf(ctx), actor: ctx.actor });

export function mountCustomerRoutes(app: Express, customers: CustomerService, logger: Logger): void {
  const withParent = async (scope: Scope, c: Customer, expand?: string): Promise<CustomerResponse> => {
    if (expand !== 'parent_customer') return toCustomerView(c);
    const parent = (await customers.parentsOf(scope, [c])).get(c.parentCustomerId ?? '');
    return { ...toCustomerView(c), parent_customer: parent ? toCustomerView(parent) : null };
  };
  const withEtag = <T>(body: T, c: Customer, status?: number) => new HttpResult(body, status, { ETag: etagOf(c.version) });

  mountRoute(
    app,
    customerApi.create,
    async ({ body, ctx }) => {
      const created = await customers.create(eventContextOf(ctx), newCustomerOf(body), ctx.requestId);
      return withEtag(toCustomerView(created), created, 201);
    },
    logger,
  );

  mountRoute(
    app,
    customerApi.list,
    async ({ query, ctx }) => {
      const scope = scopeOf(ctx);
      const page = await customers.list(scope, listQueryOf(query));
      const parents = query.expand === 'parent_customer' ? await customers.parentsOf(scope, page.items) : undefined;
      const items: CustomerResponse[] = page.items.map((c) => {
        if (!parents) return toCustomerView(c);
        const parent = c.parentCustomerId ? parents.get(c.parentCustomerId) : undefined;
        return { ...toCustomerView(c), parent_customer: parent ? toCustomerView(parent) : null };
      });
      return { items, pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );

  mountRoute(
    app,
    customerApi.getByExternalId,
    async ({ params, query, ctx }) => {
      const found = await customers.get(scopeOf(ctx), { externalId: params.external_id });
      return withEtag(await withParent(scopeOf(ctx), found, query.expand), found);
    },
    logger,
  );

  mountRoute(
    app,
    customerApi.get,
    async ({ params, query, ctx }) => {
      const found = await customers.get(scopeOf(ctx), { id: params.id });
      return withEtag(await withParent(scopeOf(ctx), found, query.expand), found);
    },
    logger,
  );

  mountRoute(
    app,
    customerApi.updateByExternalId,
    async ({ query, body, ctx, req }) => {
      const updated = await customers.update(
        eventContextOf(ctx),
        { externalId: query.external_customer_id },
        changesOf(body),
        req.header('if-match'),
        ctx.requestId,
      );
      return withEtag(toCustomerView(updated), updated);
    },
    logger,
  );

  mountRoute(
    app,
    customerApi.update,
    async ({ params, body, ctx, req }) => {
      const updated = await customers.update(eventContextOf(ctx), { id: params.id }, changesOf(body), req.header('if-match'), ctx.requestId);
      return withEtag(toCustomerView(updated), updated);
    },
    logger,
  );

  mountRoute(
    app,
    customerApi.delete,
    async ({ params, ctx }) => {
      await customers.delete(eventContextOf(ctx), params.id, ctx.requestId);
    },
    logger,
  );
}
