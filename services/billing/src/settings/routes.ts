import type { Express } from 'express';
import { settingsApi, type BillingSettingsResponse, type UpdateBillingSettingsBody } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { SettingsChange, SettingsService } from './service';
import type { BillingSettings } from './store';

const taxViewOf = ({ secret, ...t }: BillingSettings['tax']): BillingSettingsResponse['tax'] => ({ ...t, secret_set: secret !== null });

export function toSettingsView(s: BillingSettings): BillingSettingsResponse {
  return { dunning: s.dunning, invoice_settings: s.invoiceSettings, email: s.email, tax: taxViewOf(s.tax), portal: s.portal, version: s.version, updated_at: s.updatedAt?.toISOString() ?? null };
}

/** A PUT's body as the service takes it (ADR 0063): only the members given. */
export function settingsChangeOf(b: UpdateBillingSettingsBody): SettingsChange {
  const d = b.dunning;
  const i = b.invoice_settings;
  const e = b.email;
  const t = b.tax;
  const p = b.portal;
  return {
    ...(p ? { portal: { frameAncestors: p.frame_ancestors } } : {}),
    ...(e ? { email: { enabled: e.enabled, from: e.from, replyTo: e.reply_to, bcc: e.bcc } } : {}),
    ...(t ? { tax: { enabled: t.enabled, defaultBehavior: t.default_behavior, rounding: t.rounding, reverseCharge: t.reverse_charge && { enabled: t.reverse_charge.enabled, sellerCountry: t.reverse_charge.seller_country }, provider: t.provider, url: t.url, secret: t.secret } } : {}),
    ...(d ? { dunning: { enabled: d.enabled, retryScheduleDays: d.retry_schedule_days, maxAttempts: d.max_attempts, provider: d.provider } } : {}),
    ...(i ? { invoiceSettings: { companyName: i.company_name, address: i.address, logoUrl: i.logo_url, footer: i.footer, taxId: i.tax_id, accentColor: i.accent_color, country: i.country, reverseChargeText: i.reverse_charge_text } } : {}),
  };
}

export function mountSettingsRoutes(app: Express, settings: SettingsService, logger: Logger): void {
  mountRoute(app, settingsApi.getBillingSettings, async ({ ctx }) => toSettingsView(await settings.get(ctx)), logger);
  mountRoute(app, settingsApi.updateBillingSettings, async ({ body, ctx }) => toSettingsView(await settings.update(ctx, settingsChangeOf(body))), logger);
}
