import type { Express } from 'express';
import { walletApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { ExpiryJob } from './job';

export function mountExpiryRoutes(app: Express, expiry: ExpiryJob, logger: Logger): void {
  mountRoute(app, walletApi.expireCredits, async ({ ctx }) => expiry.runOnce(ctx), logger);
}
