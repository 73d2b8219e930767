import type { Scope, UpdateBillingSettingsBody } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { BillingSettings, InvoiceSettings, SettingsStore } from './store';

/** `GET|PUT /v1/settings/billing` (docs/api/billing.md#billing-settings-and-dunning, ADR 0044): PUT merges the objects it is given. */
export class SettingsService {
  constructor(
    private readonly db: Db,
    private readonly store: SettingsStore,
    private readonly clock: () => Date,
  ) {}

  get(scope: Scope): Promise<BillingSettings> {
    return this.store.get(this.db, scope);
  }

  update(scope: Scope, body: UpdateBillingSettingsBody): Promise<BillingSettings> {
    return this.db.transaction(async (trx) => {
      const current = await this.store.getForUpdate(trx, scope);
      const dunning = { ...current.dunning, ...definedOf(body.dunning ?? {}) };
      const merged = { ...(current.invoiceSettings ?? {}), ...definedOf(body.invoice_settings ?? {}) } as Partial<InvoiceSettings>;
      let invoiceSettings = current.invoiceSettings;
      if (body.invoice_settings) {
        if (!merged.company_name || !merged.address) {
          throw new ValidationError('invoice_settings needs company_name and address (the seller every invoice document shows)', { field: merged.company_name ? 'invoice_settings.address' : 'invoice_settings.company_name' });
        }
        invoiceSettings = { company_name: merged.company_name, address: merged.address, logo_url: merged.logo_url ?? null, footer: merged.footer ?? null, tax_id: merged.tax_id ?? null };
      }
      const email = { ...current.email, ...definedOf(body.email ?? {}) };
      if (email.enabled && !email.from) {
        throw new ValidationError('email.enabled needs email.from (the sender of invoice email)', { field: 'email.from' });
      }
      return this.store.save(trx, scope, { ...current, dunning, invoiceSettings, email }, this.clock());
    });
  }
}

function definedOf<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
