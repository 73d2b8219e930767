import type { Express } from 'express';
import { settingsApi, type BillingSettingsResponse } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { SettingsService } from './service';
import type { BillingSettings } from './store';

export function toSettingsView(s: BillingSettings): BillingSettingsResponse {
  return { dunning: s.dunning, invoice_settings: s.invoiceSettings, email: s.email, version: s.version, updated_at: s.updatedAt?.toISOString() ?? null };
}

export function mountSettingsRoutes(app: Express, settings: SettingsService, logger: Logger): void {
  mountRoute(app, settingsApi.getBillingSettings, async ({ ctx }) => toSettingsView(await settings.get(ctx)), logger);
  mountRoute(app, settingsApi.updateBillingSettings, async ({ body, ctx }) => toSettingsView(await settings.update(ctx, body)), logger);
}
