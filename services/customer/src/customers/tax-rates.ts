import { taxRateApi, type Scope } from '@billstream/contracts';
import { ServiceUnavailableError, ValidationError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';

/** Whether the tax rates a customer names exist and are active (docs/api/taxes.md#which-rates-a-line-bears): billing owns them. */
export interface TaxRateCheck {
  /** Throws a 400 naming `tax_rate_ids.{i}` for an unknown or archived rate. */
  assertActive(scope: Scope, ids: readonly string[], requestId: string): Promise<void>;
}

/** Asks billing's `GET /v1/tax_rates/{id}` for each id (at most 10); no answer is a 503 (nothing is written on a guess). */
export class HttpTaxRateCheck implements TaxRateCheck {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 5000) {
    this.client = new InternalClient({ service: 'billing', baseUrl, internalToken, actor: 'customer', timeoutMs });
  }

  async assertActive(scope: Scope, ids: readonly string[], requestId: string): Promise<void> {
    for (const [i, id] of ids.entries()) {
      const { status, text } = await this.client.call(scope, 'GET', taxRateApi.getTaxRate.path.replace(':id', encodeURIComponent(id)), requestId);
      if (status === 404) throw new ValidationError(`Tax rate ${id} does not exist`, { field: `tax_rate_ids.${i}`, value: id });
      if (status !== 200) throw new ServiceUnavailableError('Billing could not confirm the tax rates; retry later', { upstream_status: status });
      if ((JSON.parse(text) as { active: boolean }).active !== true) {
        throw new ValidationError(`Tax rate ${id} is archived; name an active rate`, { field: `tax_rate_ids.${i}`, value: id });
      }
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** A deployment without billing has no tax rates: any id is unknown. */
export const noTaxRates: TaxRateCheck = {
  async assertActive(_scope, ids) {
    if (ids.length > 0) throw new ValidationError(`Tax rate ${ids[0]} does not exist (no billing service)`, { field: 'tax_rate_ids.0', value: ids[0] });
  },
};
