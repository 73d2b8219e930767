export { createBillingService, type BillingServiceConfig, type BillingServiceHandle } from './service';
export { billingEnv, billingSettings, billingSettingsEnv, billingSettingsFrom, type BillingSettings } from './config';
export { migrations, SCHEMA } from './migrations';
export * from './periods';
export * from '@billstream/pricing';
