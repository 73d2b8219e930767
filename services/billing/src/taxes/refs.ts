import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { TaxRateStore } from './store';

/**
 * The tax rates a plan or price names must exist in the caller's environment and be active
 * (docs/api/taxes.md#tax-fields-of-customers-plans-and-prices): else a 400 naming `{field}.{i}`, before anything is written.
 */
export class TaxRateRefs {
  constructor(private readonly rates: TaxRateStore) {}

  async ensureActive(conn: Conn, scope: Scope, refs: ReadonlyArray<{ ids: readonly string[]; field: string }>): Promise<void> {
    const all = [...new Set(refs.flatMap((r) => r.ids))];
    if (all.length === 0) return;
    const found = new Map((await this.rates.getMany(conn, scope, all)).map((r) => [r.id, r]));
    for (const { ids, field } of refs) {
      ids.forEach((id, i) => {
        const rate = found.get(id);
        if (!rate) throw new ValidationError(`Tax rate ${id} does not exist`, { field: `${field}.${i}`, value: id });
        if (!rate.active) throw new ValidationError(`Tax rate ${id} is archived; name an active rate`, { field: `${field}.${i}`, value: id });
      });
    }
  }
}
