import { DUNNING_DEFAULTS, EMAIL_DEFAULTS, PORTAL_SETTINGS_DEFAULTS, TAX_DEFAULTS, type PortalSettings, type BillingSettingsResponse, type DunningSettings, type EmailSettings, type Scope, type TaxSettings } from '@billstream/contracts';
import type { Conn, Trx } from '@billstream/db';

export type InvoiceSettings = NonNullable<BillingSettingsResponse['invoice_settings']>;

/** A tenant and environment's billing settings (ADR 0044): dunning, and the seller on invoice documents. */
export interface BillingSettings {
  dunning: DunningSettings;
  invoiceSettings: InvoiceSettings | null;
  /** Invoice email (ADR 0067): off by default. */
  email: EmailSettings;
  /** Tax (docs/api/taxes.md#settings): off by default. */
  tax: TaxSettings;
  /** The customer portal (ADR 0069): who may frame it; none by default. */
  portal: PortalSettings;
  version: number;
  updatedAt: Date | null;
}

interface Row {
  tenant_id: string;
  environment_id: string;
  settings: { dunning?: Partial<DunningSettings>; invoice_settings?: InvoiceSettings | null; email?: Partial<EmailSettings>; tax?: Partial<TaxSettings>; portal?: Partial<PortalSettings> };
  version: number;
  updated_at: Date;
}

const taxOf = (t: Partial<TaxSettings> | undefined): TaxSettings => ({ ...TAX_DEFAULTS, ...t, reverse_charge: { ...TAX_DEFAULTS.reverse_charge, ...t?.reverse_charge } });

function fromRow(r: Row | undefined): BillingSettings {
  if (!r) return { dunning: { ...DUNNING_DEFAULTS }, invoiceSettings: null, email: { ...EMAIL_DEFAULTS }, tax: taxOf(undefined), portal: { ...PORTAL_SETTINGS_DEFAULTS }, version: 0, updatedAt: null };
  return {
    dunning: { ...DUNNING_DEFAULTS, ...r.settings.dunning },
    invoiceSettings: r.settings.invoice_settings ?? null,
    email: { ...EMAIL_DEFAULTS, ...r.settings.email },
    tax: taxOf(r.settings.tax),
    portal: { ...PORTAL_SETTINGS_DEFAULTS, ...r.settings.portal },
    version: r.version,
    updatedAt: r.updated_at,
  };
}

/** `billing_settings`: one row per tenant and environment; absent, the defaults. */
export class SettingsStore {
  async get(conn: Conn, scope: Scope): Promise<BillingSettings> {
    return fromRow(await conn<Row>('billing_settings').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }).first());
  }

  async getForUpdate(trx: Trx, scope: Scope): Promise<BillingSettings> {
    return fromRow(await trx<Row>('billing_settings').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }).forUpdate().first());
  }

  async save(trx: Trx, scope: Scope, s: BillingSettings, at: Date): Promise<BillingSettings> {
    const row = {
      tenant_id: scope.tenantId,
      environment_id: scope.environmentId,
      settings: JSON.stringify({ dunning: s.dunning, invoice_settings: s.invoiceSettings, email: s.email, tax: s.tax, portal: s.portal }),
      version: s.version + 1,
      updated_at: at,
    };
    const [saved] = await trx('billing_settings').insert(row).onConflict(['tenant_id', 'environment_id']).merge().returning('*');
    return fromRow(saved as Row);
  }

  /** The tenants and environments with dunning on (the period job's dunning run). */
  async dunningEnabled(conn: Conn, scope?: Scope): Promise<Array<Scope & { dunning: DunningSettings }>> {
    const rows = await conn<Row>('billing_settings')
      .whereRaw(`(settings -> 'dunning' ->> 'enabled')::boolean IS TRUE`)
      .modify((q) => (scope ? q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }) : q));
    return (rows as Row[]).map((r) => ({ tenantId: r.tenant_id, environmentId: r.environment_id, dunning: fromRow(r).dunning }));
  }
}
