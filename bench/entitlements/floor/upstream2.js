const { createHttpApp, finishApp, internalAuth, staticRoutes, mountRoute, mountHealth, listen } = require(require('node:path').join(__dirname, '../../../libs/http/dist'));
const { entitlementApi, ALL_ROUTES } = require(require('node:path').join(__dirname, '../../../libs/contracts/dist'));
const { createLogger } = require(require('node:path').join(__dirname, '../../../libs/logger/dist'));
const logger = createLogger({ service: 'billing', level: 'info' });
const app = createHttpApp({ logger, service: 'billing' });
mountHealth(app, async () => ({}));
app.use(internalAuth('tok'));
if (!process.env.NOSTATIC) app.use(staticRoutes(app));
// Other routes, as billing mounts them
for (const def of ALL_ROUTES.filter((d) => d.operationId !== 'checkEntitlement')) app[def.method](def.path, (req, res) => res.json({}));
mountRoute(app, entitlementApi.checkEntitlement, async () => ({ allowed: true, feature_lookup_key: 'api_calls', type: 'METERED', usage: '12', limit: '1000000', remaining: '999988', is_soft_limit: false, period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z' }), logger);
finishApp(app, logger);
listen(app, 4101, '127.0.0.1');
