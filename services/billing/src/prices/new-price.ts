import type { Scope } from '@billstream/contracts';
import { NotFoundError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { Meters } from '../clients/meters/domain';
import type { NewPrice, Price } from './domain';

export function priceOf(scope: Scope, planId: string, input: NewPrice, at: Date): Price {
  return { id: newId('price'), ...scope, planId, ...input, parentPriceId: null, subscriptionId: null, status: 'active', createdAt: at, updatedAt: at };
}

/**
 * Every meter a new price names must exist in the caller's tenant and environment (the
 * ingestion-aggregator owns meters); one of another tenant is as unknown as a missing one.
 */
export class MeterCheck {
  constructor(private readonly meters: Meters) {}

  async ensureAll(scope: Scope, refs: Array<{ meterId: string | null; field: string }>, requestId: string): Promise<void> {
    const seen = new Map<string, boolean>();
    for (const { meterId, field } of refs) {
      if (meterId === null) continue;
      let found = seen.get(meterId);
      if (found === undefined) {
        found = await this.meters.exists(scope, meterId, requestId);
        seen.set(meterId, found);
      }
      if (!found) throw new NotFoundError(`Meter ${meterId} not found`, { field, meter_id: meterId });
    }
  }
}
