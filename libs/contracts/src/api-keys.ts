import { z } from 'zod';
import { PERMISSIONS, listResponse, paginationQuery } from './common';
import { defineRoute } from './routes';

export const permissionOrAll = z.enum(['*', ...PERMISSIONS]);

export const createApiKeyBody = z.strictObject({
  name: z.string().min(1).max(200),
  permissions: z.array(permissionOrAll).min(1, 'needs at least one permission'),
  environment_id: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
    .optional(),
});

export const apiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  permissions: z.array(z.string()),
  tenant_id: z.string(),
  environment_id: z.string(),
  key_prefix: z.string(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});
export type ApiKeyView = z.infer<typeof apiKeySchema>;

export const createdApiKeySchema = apiKeySchema.extend({ key: z.string() });

export const idParams = z.strictObject({ id: z.string().min(1) });

export const apiKeyApi = {
  create: defineRoute({
    operationId: 'createApiKey',
    method: 'post',
    path: '/v1/api-keys',
    service: 'gateway',
    permission: 'api_keys:write',
    summary: 'Create an API key in the caller environment (another environment of its tenant needs api_keys:tenant); the key is shown once',
    tag: 'API keys',
    body: createApiKeyBody,
    response: createdApiKeySchema,
    status: 201,
  }),
  list: defineRoute({
    operationId: 'listApiKeys',
    method: 'get',
    path: '/v1/api-keys',
    service: 'gateway',
    permission: 'api_keys:read',
    summary: 'List the API keys of the caller environment (of its whole tenant with api_keys:tenant), without secrets',
    tag: 'API keys',
    query: z.strictObject({ ...paginationQuery }),
    response: listResponse(apiKeySchema),
    status: 200,
  }),
  revoke: defineRoute({
    operationId: 'revokeApiKey',
    method: 'delete',
    path: '/v1/api-keys/:id',
    service: 'gateway',
    permission: 'api_keys:write',
    summary: 'Revoke an API key of the caller environment (of its tenant with api_keys:tenant); it gives 401 from then on',
    tag: 'API keys',
    params: idParams,
    status: 204,
    errors: [404],
  }),
};

export const apiKeyRoutes = Object.values(apiKeyApi);
