export { createWebhookService, type WebhookServiceConfig } from './service';
export { webhookSettingsFromEnv, type WebhookSettings } from './config';
export { migrations, SCHEMA } from './migrations';
