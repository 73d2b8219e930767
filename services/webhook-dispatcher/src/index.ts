export { createWebhookService, type WebhookServiceConfig } from './service';
export { webhookEnv, webhookSettings, webhookSettingsFromEnv, type WebhookSettings } from './config';
export { migrations, SCHEMA } from './migrations';
