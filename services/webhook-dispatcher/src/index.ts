export { createWebhookService, type WebhookServiceConfig } from './service';
export { migrations, SCHEMA } from './migrations';
