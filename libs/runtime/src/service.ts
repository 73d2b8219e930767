import type { Express } from 'express';
import type { Bus } from '@billstream/bus';
import type { ServiceName } from '@billstream/contracts';
import type { Db, Migration } from '@billstream/db';
import type { Logger } from '@billstream/logger';

/** What every service factory is given: nothing is created deep inside a service. */
export interface ServiceDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
}

/** A composed service: its internal HTTP app and its background work. */
export interface Service {
  readonly name: ServiceName;
  readonly schema: string;
  readonly migrations: Migration[];
  readonly app: Express;
  /** Runs migrations, then starts consumers, relays and scheduled jobs. */
  start(): Promise<void>;
  stop(): Promise<void>;
  ready(): Promise<Record<string, boolean>>;
}
