import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openServiceDatabases } from '@billstream/db';
import { createLogger } from '@billstream/logger';
import { usageEventsHandler } from '../events/consumer';
import { DeadLetterStore } from '../events/dead-letter-store';
import { EventPartitions } from '../events/partitions';
import { EventStore } from '../events/store';
import { migrations, SCHEMA } from '../migrations';
import { consumed, poisonRecords, usageMessage } from './poison';

/**
 * One batch of good and unstorable records through the usage-events handler on embedded PGlite
 * (the database of `npm start`), then one more good record; prints what was stored as JSON.
 * Run from dist by embedded-dead-letters.int.test.ts: jest cannot load PGlite (an ES module).
 */
async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-embedded-poison-'));
  const databases = await openServiceDatabases({ dataDir: dir });
  const db = databases.forSchema(SCHEMA);
  try {
    await migrate(db, SCHEMA, migrations);
    const logger = createLogger({ service: 'embedded-poison', level: 'silent' });
    const partitions = new EventPartitions(db, logger);
    await partitions.load();
    const events = new EventStore();
    const deadLetters = new DeadLetterStore();
    const handle = usageEventsHandler({ db, events, deadLetters, partitions, logger });
    const noop = { heartbeat: async () => {} };
    const good = (id: string) => JSON.stringify(usageMessage('embedded', id));
    await handle(consumed('embedded', [good('e-1'), ...poisonRecords('embedded').map((b) => b.value), good('e-2')]), noop);
    await handle(consumed('embedded', [good('e-3')], 100), noop);
    const scope = { tenantId: 'tenant-a', environmentId: 'production' };
    const result = {
      stored: await db('events').orderBy('event_id').pluck('event_id'),
      deadLetterCodes: await db('event_dead_letters').orderBy('kafka_offset').pluck('error_code'),
      deadLettered: await deadLetters.count(db, scope),
      totalEvents: (await events.stats(db, scope)).totalEvents,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await databases.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
