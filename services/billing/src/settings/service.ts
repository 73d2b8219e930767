import { EU_MEMBER_STATES, type Scope, type TaxSettings } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { BillingSettings, InvoiceSettings, SettingsStore } from './store';

/** A PUT's change (ADR 0063): each member given replaces the stored one; `null` clears what may be cleared. */
export interface SettingsChange {
  dunning?: { enabled?: boolean; retryScheduleDays?: number[]; maxAttempts?: number; provider?: string | null };
  email?: { enabled?: boolean; from?: string | null; replyTo?: string | null; bcc?: string | null };
  invoiceSettings?: { companyName?: string; address?: string; logoUrl?: string | null; footer?: string | null; taxId?: string | null; accentColor?: string | null; country?: string | null; reverseChargeText?: string | null };
  portal?: { frameAncestors?: string[] };
  tax?: {
    enabled?: boolean;
    defaultBehavior?: TaxSettings['default_behavior'];
    rounding?: TaxSettings['rounding'];
    reverseCharge?: { enabled?: boolean; sellerCountry?: string | null };
    provider?: TaxSettings['provider'];
    url?: string | null;
    secret?: string | null;
  };
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
      const given = definedOf({ company_name: i.companyName, address: i.address, logo_url: i.logoUrl, footer: i.footer, tax_id: i.taxId, accent_color: i.accentColor, country: i.country, reverse_charge_text: i.reverseChargeText });
      const merged = { ...(current.invoiceSettings ?? {}), ...given } as Partial<InvoiceSettings>;
      let invoiceSettings = current.invoiceSettings;
      if (change.invoiceSettings) {
        if (!merged.company_name || !merged.address) {
          throw new ValidationError('invoice_settings needs company_name and address (the seller every invoice document shows)', { field: merged.company_name ? 'invoice_settings.address' : 'invoice_settings.company_name' });
        }
        invoiceSettings = { company_name: merged.company_name, address: merged.address, logo_url: merged.logo_url ?? null, footer: merged.footer ?? null, tax_id: merged.tax_id ?? null, accent_color: merged.accent_color ?? null, country: merged.country ?? null, reverse_charge_text: merged.reverse_charge_text ?? null };
      }
      const e = change.email ?? {};
      const email = { ...current.email, ...definedOf({ enabled: e.enabled, from: e.from, reply_to: e.replyTo, bcc: e.bcc }) };
      if (email.enabled && !email.from) {
        throw new ValidationError('email.enabled needs email.from (the sender of invoice email)', { field: 'email.from' });
      }
      const tax = mergedTax(current.tax, change.tax);
      // Origins compare as the browser does, case-insensitively: kept lowercased and once each.
      const ancestors = change.portal?.frameAncestors;
      const portal = ancestors ? { frame_ancestors: [...new Set(ancestors.map((o) => o.toLowerCase()))] } : current.portal;
      return this.store.save(trx, scope, { ...current, dunning, invoiceSettings, email, tax, portal }, this.clock());
    });
  }
}

/** The tax settings a change leaves (docs/api/taxes.md#settings), checked as a whole: a 400 naming the field, nothing saved. */
function mergedTax(current: TaxSettings, change: SettingsChange['tax']): TaxSettings {
  if (!change) return current;
  const rc = change.reverseCharge ?? {};
  const tax: TaxSettings = {
    ...current,
    ...definedOf({ enabled: change.enabled, default_behavior: change.defaultBehavior, rounding: change.rounding, provider: change.provider, url: change.url, secret: change.secret }),
    reverse_charge: { ...current.reverse_charge, ...definedOf({ enabled: rc.enabled, seller_country: rc.sellerCountry }) },
  };
  if (tax.reverse_charge.enabled && !tax.reverse_charge.seller_country) {
    throw new ValidationError('tax.reverse_charge.enabled needs tax.reverse_charge.seller_country (the seller\'s EU member state)', { field: 'tax.reverse_charge.seller_country' });
  }
  if (tax.reverse_charge.seller_country && !EU_MEMBER_STATES.has(tax.reverse_charge.seller_country)) {
    throw new ValidationError(`tax.reverse_charge.seller_country ${tax.reverse_charge.seller_country} is not an EU member state`, { field: 'tax.reverse_charge.seller_country' });
  }
  if (tax.provider === 'HTTP') {
    // The HTTP provider (docs/api/taxes.md#http-provider): billing POSTs each draft to `url`, signed with `secret`.
    if (!tax.url) throw new ValidationError('tax.provider HTTP needs tax.url (the http(s) URL billing POSTs each draft to)', { field: 'tax.url' });
    if (!URL.canParse(tax.url) || !['http:', 'https:'].includes(new URL(tax.url).protocol)) throw new ValidationError(`tax.url ${tax.url} is not an http(s) URL`, { field: 'tax.url' });
    if (!tax.secret) throw new ValidationError('tax.provider HTTP needs tax.secret (the key of the requests\' X-Service-Signature)', { field: 'tax.secret' });
  }
  return tax;
}

function definedOf<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
