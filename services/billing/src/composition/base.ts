/** What every area of billing's composition is given: the database, the logger, the clock, the outbox's nudge and the settings. */
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { BillingSettings } from '../config';

export interface CompositionBase {
  db: Db;
  logger: Logger;
  clock: () => Date;
  /** Nudges the outbox relay after a commit that wrote events. */
  published: () => void;
  settings: BillingSettings;
}
