export { createGateway, logEnsuredKey, type Gateway, type GatewayConfig } from './gateway';
export { gatewayEnv, gatewaySettings, gatewaySettingsEnv, gatewaySettingsFrom, type GatewaySettings } from './config';
export { buildOpenApiDocument, type OpenApiDocument } from './openapi';
export { ApiKeyService } from './api-keys/service';
export { ApiKeyStore } from './api-keys/store';
export { migrations, SCHEMA } from './migrations';
