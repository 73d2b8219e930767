import type { Scope, TaxType } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, PG_UNIQUE_VIOLATION, pgErrorCode } from '@billstream/errors';
import { newId } from '@billstream/ids';
import Decimal from 'decimal.js';
import type { TaxRate, TaxRateListQuery, TaxRateStore } from './store';

/** What a new tax rate is, mapped from the wire. */
export interface NewTaxRate {
  code: string;
  name: string;
  percentage: string;
  taxType: TaxType;
  country: string | null;
  region: string | null;
  description: string | null;
}

export const taxRateNotFound = (id: string, field = 'id') => new NotFoundError(`Tax rate ${id} not found`, { field, tax_rate_id: id });

/** Tax rates: created, read, renamed, archived (docs/api/taxes.md). One statement each: nothing to lock across. */
export class TaxRateService {
  constructor(
    private readonly db: Db,
    private readonly rates: TaxRateStore,
    private readonly clock: () => Date,
  ) {}

  async create(scope: Scope, input: NewTaxRate): Promise<TaxRate> {
    const now = this.clock();
    const rate: TaxRate = { id: newId('taxRate'), tenantId: scope.tenantId, environmentId: scope.environmentId, ...input, percentage: new Decimal(input.percentage).toFixed(), active: true, createdAt: now, updatedAt: now };
    try {
      await this.rates.insert(this.db, rate);
    } catch (err) {
      if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) throw new AlreadyExistsError(`A tax rate with code "${input.code}" already exists`, { field: 'code', code: input.code });
      throw err;
    }
    return rate;
  }

  async get(scope: Scope, id: string): Promise<TaxRate> {
    const rate = await this.rates.get(this.db, scope, id);
    if (!rate) throw taxRateNotFound(id);
    return rate;
  }

  list(scope: Scope, q: TaxRateListQuery): Promise<{ items: TaxRate[]; total: number }> {
    return this.rates.list(this.db, scope, q);
  }

  async update(scope: Scope, id: string, changes: { name?: string; description?: string | null }): Promise<TaxRate> {
    const rate = await this.rates.update(this.db, scope, id, changes, this.clock());
    if (!rate) throw taxRateNotFound(id);
    return rate;
  }

  /** Archives the rate (`active: false`); archiving twice changes nothing. */
  async archive(scope: Scope, id: string): Promise<TaxRate> {
    const current = await this.get(scope, id);
    if (!current.active) return current;
    return (await this.rates.update(this.db, scope, id, { active: false }, this.clock())) ?? current;
  }
}
