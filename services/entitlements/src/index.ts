export { createEntitlementsService, type EntitlementsServiceConfig, type EntitlementsServiceHandle } from './service';
export { entitlementsEnv, entitlementsSettingsEnv, entitlementsSettingsFrom, type EntitlementsSettings } from './config';
export { migrations, SCHEMA } from './migrations';
export { ACCESS_CHANNEL } from './check/access-notices';
export { USAGE_NOTICES_GROUP_PREFIX } from './check/usage-notices';
