const express = require(require('node:path').join(__dirname, '../../../node_modules/express'));
const { createHttpApp, finishApp, internalAuth, mountRoute, listen } = require(require('node:path').join(__dirname, '../../../libs/http/dist'));
const { entitlementApi } = require(require('node:path').join(__dirname, '../../../libs/contracts/dist'));
const { createLogger } = require(require('node:path').join(__dirname, '../../../libs/logger/dist'));
const logger = createLogger({ service: 'billing', level: 'info' });
const V = process.env.V;
const result = { allowed: true, feature_lookup_key: 'api_calls', type: 'METERED', usage: '12', limit: '1000000', remaining: '999988', is_soft_limit: false, period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z' };
let app;
const raw = (req, res) => { const s = JSON.stringify(result); res.statusCode = 200; res.setHeader('Content-Type', 'application/json; charset=utf-8'); res.setHeader('Content-Length', Buffer.byteLength(s)); res.end(s); };
if (V === 'A2') {
  app = express();
  app.post('/v1/entitlements/check', raw);
} else if (V === 'A3') {
  app = express();
  app.post('/v1/entitlements/check', (req, res) => { let b = ''; req.on('data', (c) => (b += c)); req.on('end', () => { JSON.parse(b); raw(req, res); }); });
} else if (V === 'A' || V === 'B') {
  app = express();
  if (V === 'B') app.use(express.json());
  app.post('/v1/entitlements/check', (req, res) => res.json(result));
} else {
  app = createHttpApp({ logger, service: 'billing' });
  if (V !== 'C') app.use(internalAuth('tok'));
  if (V === 'E') mountRoute(app, entitlementApi.checkEntitlement, async () => result, logger);
  else app.post('/v1/entitlements/check', (req, res) => res.json(result));
  finishApp(app, logger);
}
listen(app, 4101, '127.0.0.1');
