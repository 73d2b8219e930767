import { z } from 'zod';
import { csvList, metadataSchema, paginationQuery, taxRateIdsSchema } from './common';
import { defineRoute, type RouteDef } from './routes';

export const CUSTOMER_STATUSES = ['published', 'draft', 'archived'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

export const CUSTOMER_SORT_FIELDS = ['created_at', 'updated_at', 'name', 'email', 'external_id'] as const;
export type CustomerSortField = (typeof CUSTOMER_SORT_FIELDS)[number];

const externalCustomerId = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const customerEmail = z.email('must be a valid email address').max(320, 'must be at most 320 characters');
const shortText = z.string().max(255, 'must be at most 255 characters');
const customerStatus = z.enum(CUSTOMER_STATUSES);

const addressFields = {
  address_line1: shortText.nullable().optional(),
  address_line2: shortText.nullable().optional(),
  address_city: shortText.nullable().optional(),
  address_state: shortText.nullable().optional(),
  address_postal_code: z.string().max(32, 'must be at most 32 characters').nullable().optional(),
  address_country: z.string().max(64, 'must be at most 64 characters').nullable().optional(),
};

/** Tax identity (docs/api/customers.md#tax-identity): each value is checked by format and checksum by the customer service. */
export const CUSTOMER_TAX_ID_TYPES = ['eu_vat', 'gb_vat', 'ch_vat', 'no_vat', 'au_abn', 'nz_gst', 'ca_bn', 'in_gst', 'us_ein', 'br_cnpj'] as const;
export const CUSTOMER_TAX_EXEMPTIONS = ['none', 'exempt', 'reverse'] as const;
const taxIdSchema = z.strictObject({
  type: z.enum(CUSTOMER_TAX_ID_TYPES, `must be one of ${CUSTOMER_TAX_ID_TYPES.join(', ')}`),
  value: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
});
const taxFields = {
  tax_ids: z.array(taxIdSchema).max(10, 'at most 10 tax ids').optional(),
  tax_exempt: z.enum(CUSTOMER_TAX_EXEMPTIONS, `must be one of ${CUSTOMER_TAX_EXEMPTIONS.join(', ')}`).optional(),
  /** The rates the customer's lines bear when neither their price nor their plan names any (docs/api/taxes.md). */
  tax_rate_ids: taxRateIdsSchema.optional(),
};

export const createCustomerBody = z.strictObject({
  external_customer_id: externalCustomerId,
  name: shortText.nullable().optional(),
  email: customerEmail.nullable().optional(),
  ...addressFields,
  ...taxFields,
  metadata: metadataSchema.optional(),
  parent_customer_id: z.string().min(1).nullable().optional(),
  status: customerStatus.optional(),
});
export type CreateCustomerBody = z.infer<typeof createCustomerBody>;

/** Every updatable field; absent fields stay, `null` clears an optional field. */
export const updateCustomerBody = z.strictObject({
  external_customer_id: externalCustomerId.optional(),
  name: shortText.nullable().optional(),
  email: customerEmail.nullable().optional(),
  ...addressFields,
  ...taxFields,
  metadata: metadataSchema.optional(),
  parent_customer_id: z.string().min(1).nullable().optional(),
  status: customerStatus.optional(),
});
export type UpdateCustomerBody = z.infer<typeof updateCustomerBody>;

const idList = csvList.refine((ids) => ids.length <= 1000, 'at most 1000 values');

const expandQuery = z.enum(['parent_customer'], 'must be parent_customer');

export const listCustomersQuery = z.strictObject({
  ...paginationQuery,
  sort: z.enum(CUSTOMER_SORT_FIELDS, `must be one of ${CUSTOMER_SORT_FIELDS.join(', ')}`).default('created_at'),
  order: z.enum(['asc', 'desc'], 'must be asc or desc').default('desc'),
  status: z.enum(CUSTOMER_STATUSES, `must be one of ${CUSTOMER_STATUSES.join(', ')}`).optional(),
  customer_ids: idList.optional(),
  external_ids: idList.optional(),
  external_id: z.string().min(1, 'must not be empty').optional(),
  email: z.string().min(1, 'must not be empty').max(320).optional(),
  parent_customer_ids: idList.optional(),
  expand: expandQuery.optional(),
});
export type ListCustomersQuery = z.infer<typeof listCustomersQuery>;

export const customerIdParams = z.strictObject({ id: z.string().min(1) });
export const customerExternalIdParams = z.strictObject({ external_id: z.string().min(1) });
export const customerExpandQuery = z.strictObject({ expand: expandQuery.optional() });
export const customerByExternalIdQuery = z.strictObject({ external_customer_id: externalCustomerId });

const customerFields = {
  id: z.string(),
  external_id: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  address_line1: z.string().nullable(),
  address_line2: z.string().nullable(),
  address_city: z.string().nullable(),
  address_state: z.string().nullable(),
  address_postal_code: z.string().nullable(),
  address_country: z.string().nullable(),
  tax_ids: z.array(z.object({ type: z.enum(CUSTOMER_TAX_ID_TYPES), value: z.string() })),
  tax_exempt: z.enum(CUSTOMER_TAX_EXEMPTIONS),
  tax_rate_ids: z.array(z.string()),
  parent_customer_id: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  status: customerStatus,
  tenant_id: z.string(),
  environment_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
};

/** The public customer (also `payload.customer` of the customer events). */
export const customerSchema = z.object({ ...customerFields });
export type CustomerView = z.infer<typeof customerSchema>;

/** A customer in a response, with `parent_customer` when `expand=parent_customer`. */
export const customerResponseSchema = customerSchema.extend({ parent_customer: customerSchema.nullable().optional() });
export type CustomerResponse = z.infer<typeof customerResponseSchema>;

export const customerListResponse = z.object({
  items: z.array(customerResponseSchema),
  pagination: z.object({ total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
});

const tag = 'Customers';

export const customerApi = {
  create: defineRoute({
    operationId: 'createCustomer',
    method: 'post',
    path: '/v1/customers',
    service: 'customer',
    permission: 'customers:write',
    summary: 'Create a customer; a duplicate external_customer_id in the environment gives 409',
    tag,
    body: createCustomerBody,
    response: customerSchema,
    status: 201,
    errors: [404, 409],
  }),
  list: defineRoute({
    operationId: 'listCustomers',
    method: 'get',
    path: '/v1/customers',
    service: 'customer',
    permission: 'customers:read',
    summary: 'List customers with filters, sorting and pagination',
    tag,
    query: listCustomersQuery,
    response: customerListResponse,
    status: 200,
  }),
  getByExternalId: defineRoute({
    operationId: 'getCustomerByExternalId',
    method: 'get',
    path: '/v1/customers/external/:external_id',
    service: 'customer',
    permission: 'customers:read',
    summary: 'Read the customer with this external id',
    tag,
    params: customerExternalIdParams,
    query: customerExpandQuery,
    response: customerResponseSchema,
    status: 200,
    errors: [404],
  }),
  get: defineRoute({
    operationId: 'getCustomer',
    method: 'get',
    path: '/v1/customers/:id',
    service: 'customer',
    permission: 'customers:read',
    summary: 'Read a customer; the ETag header carries its version',
    tag,
    params: customerIdParams,
    query: customerExpandQuery,
    response: customerResponseSchema,
    status: 200,
    errors: [404],
  }),
  updateByExternalId: defineRoute({
    operationId: 'updateCustomerByExternalId',
    method: 'put',
    path: '/v1/customers',
    service: 'customer',
    permission: 'customers:write',
    summary: 'Update the customer named by ?external_customer_id=; If-Match guards against lost updates',
    tag,
    query: customerByExternalIdQuery,
    body: updateCustomerBody,
    response: customerSchema,
    status: 200,
    errors: [404, 409],
  }),
  update: defineRoute({
    operationId: 'updateCustomer',
    method: 'put',
    path: '/v1/customers/:id',
    service: 'customer',
    permission: 'customers:write',
    summary: 'Update a customer; If-Match with a stale ETag gives 409 version_conflict',
    tag,
    params: customerIdParams,
    body: updateCustomerBody,
    response: customerSchema,
    status: 200,
    errors: [404, 409],
  }),
  delete: defineRoute({
    operationId: 'deleteCustomer',
    method: 'delete',
    path: '/v1/customers/:id',
    service: 'customer',
    permission: 'customers:write',
    summary: 'Delete a customer for good (204); a customer with children cannot be deleted',
    tag,
    params: customerIdParams,
    status: 204,
    errors: [404],
  }),
};

/** Customer API (issue #3). */
export const customerRoutes: RouteDef[] = Object.values(customerApi) as RouteDef[];
