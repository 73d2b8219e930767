import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { BillingSettings, InvoiceSettings, SettingsStore } from './store';

/** A PUT's change (ADR 0063): each member given replaces the stored one; `null` clears what may be cleared. */
export interface SettingsChange {
  dunning?: { enabled?: boolean; retryScheduleDays?: number[]; maxAttempts?: number; provider?: string | null };
  email?: { enabled?: boolean; from?: string | null; replyTo?: string | null; bcc?: string | null };
  invoiceSettings?: { companyName?: string; address?: string; logoUrl?: string | null; footer?: string | null; taxId?: string | null; accentColor?: string | null };
}

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

  update(scope: Scope, change: SettingsChange): Promise<BillingSettings> {
    return this.db.transaction(async (trx) => {
      const current = await this.store.getForUpdate(trx, scope);
      // The stored settings keep the request's field names (ADR 0044): they are also the documents' seller snapshot.
      const d = change.dunning ?? {};
      const dunning = { ...current.dunning, ...definedOf({ enabled: d.enabled, retry_schedule_days: d.retryScheduleDays, max_attempts: d.maxAttempts, provider: d.provider }) };
      const i = change.invoiceSettings ?? {};
      const given = definedOf({ company_name: i.companyName, address: i.address, logo_url: i.logoUrl, footer: i.footer, tax_id: i.taxId, accent_color: i.accentColor });
      const merged = { ...(current.invoiceSettings ?? {}), ...given } as Partial<InvoiceSettings>;
      let invoiceSettings = current.invoiceSettings;
      if (change.invoiceSettings) {
        if (!merged.company_name || !merged.address) {
          throw new ValidationError('invoice_settings needs company_name and address (the seller every invoice document shows)', { field: merged.company_name ? 'invoice_settings.address' : 'invoice_settings.company_name' });
        }
        invoiceSettings = { company_name: merged.company_name, address: merged.address, logo_url: merged.logo_url ?? null, footer: merged.footer ?? null, tax_id: merged.tax_id ?? null, accent_color: merged.accent_color ?? null };
      }
      const e = change.email ?? {};
      const email = { ...current.email, ...definedOf({ enabled: e.enabled, from: e.from, reply_to: e.replyTo, bcc: e.bcc }) };
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
