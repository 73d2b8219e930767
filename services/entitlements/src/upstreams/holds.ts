import { walletHeldQuantityInternalApi, type Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import type { HeldQuantity } from '../check/access';

/** The wallet's quantity held by live reservations of a customer's feature (the wallet owns reservations, ADR 0070). */
export class HttpHeldQuantity implements HeldQuantity {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 10_000) {
    this.client = new InternalClient({ service: 'wallet', baseUrl, internalToken, actor: 'entitlements', timeoutMs });
  }

  async held(scope: Scope, customerId: string, featureId: string, requestId: string): Promise<string> {
    const { status, text } = await this.client.call(scope, 'POST', walletHeldQuantityInternalApi.held.path, requestId, { customer_id: customerId, feature_id: featureId });
    if (status !== 200) throw new ServiceUnavailableError('The wallet service could not give the held quantity; retry later', { upstream_status: status });
    return (JSON.parse(text) as { held: string }).held;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
