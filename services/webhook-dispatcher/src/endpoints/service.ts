import type { WebhookEndpointView, Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError, VersionConflictError } from '@billstream/errors';
import { etagOf, matchesIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import { TaskStore } from '../dispatch/task-store';
import { generateSecret } from '../signing';
import type { UrlPolicy } from '../url-policy';
import { EndpointStore, type EndpointChanges, type WebhookEndpoint } from './store';

export interface NewEndpoint {
  url: string;
  events: string[];
  enabled: boolean;
  description?: string;
}

export function toEndpointView(e: WebhookEndpoint): WebhookEndpointView {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    description: e.description,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`Webhook endpoint ${id} not found`, { field: 'id', value: id });
}

/** Endpoint CRUD. URLs pass the URL policy; disabling an endpoint cancels its planned retries. */
export class EndpointService {
  private readonly store = new EndpointStore();
  private readonly tasks = new TaskStore();

  constructor(
    private readonly db: Db,
    private readonly policy: UrlPolicy,
  ) {}

  async create(scope: Scope, input: NewEndpoint): Promise<WebhookEndpoint> {
    await this.policy.assertAllowed(input.url);
    return this.store.insert(this.db, {
      id: newId('webhookEndpoint'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      url: input.url,
      events: input.events,
      enabled: input.enabled,
      description: input.description ?? null,
      secret: generateSecret(),
    });
  }

  async get(scope: Scope, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.store.find(this.db, scope, id);
    if (!endpoint) throw notFound(id);
    return endpoint;
  }

  async list(scope: Scope, filter: { enabled?: boolean }, limit: number, offset: number) {
    return this.store.list(this.db, scope, filter, limit, offset);
  }

  async update(scope: Scope, id: string, changes: EndpointChanges, ifMatch?: string): Promise<WebhookEndpoint> {
    if (changes.url !== undefined) await this.policy.assertAllowed(changes.url);
    return this.db.transaction(async (trx) => {
      const current = await this.store.find(trx, scope, id, true);
      if (!current) throw notFound(id);
      if (!matchesIfMatch(ifMatch, etagOf(current.version))) {
        throw new VersionConflictError('The endpoint was modified since it was read; fetch it again', {
          field: 'If-Match',
          current_etag: etagOf(current.version),
        });
      }
      if (Object.values(changes).every((v) => v === undefined)) return current;
      const updated = await this.store.update(trx, scope, id, changes);
      if (current.enabled && !updated.enabled) await this.tasks.cancelPending(trx, id);
      return updated;
    });
  }

  async remove(scope: Scope, id: string): Promise<void> {
    const deleted = await this.db.transaction((trx) => this.store.delete(trx, scope, id));
    if (!deleted) throw notFound(id);
  }
}
