import { z } from 'zod';
import { INTERNAL_TOKEN_MIN_LENGTH, loadConfig, secretEnv } from '@billstream/config';
import { migrate, notifyChannelMany, openServiceDatabases } from '@billstream/db';
import { ACCESS_CHANNEL } from './check/access-notices';
import { migrations, SCHEMA } from './migrations';
import { SnapshotSeeder } from './projection/seed';
import { ProjectionStore } from './projection/store';

/**
 * `npm run seed -w @billstream/entitlements` (ADR 0061, docs/operations.md): seeds the projection
 * from billing's snapshot, whether or not a start did already; safe while the service runs and
 * consumes (the seed and billing-events commute), and its replicas then forget what they kept.
 */
async function main(): Promise<void> {
  const config = loadConfig(
    z.object({
      DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string').optional(),
      DATA_DIR: z.string().default('.data'),
      BILLING_SERVICE_URL: z.string().url('must be the base URL of the billing service'),
      INTERNAL_TOKEN: secretEnv(INTERNAL_TOKEN_MIN_LENGTH),
    }),
  );
  const databases = await openServiceDatabases({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    const db = databases.forSchema(SCHEMA);
    await migrate(db, SCHEMA, migrations);
    const seeder = new SnapshotSeeder({ db, store: new ProjectionStore(), billingUrl: () => config.BILLING_SERVICE_URL, internalToken: config.INTERNAL_TOKEN });
    const { rows, written } = await seeder.seed();
    await seeder.close();
    // A notice no replica can read makes each forget what its cache holds (AccessNotices).
    await notifyChannelMany(db, ACCESS_CHANNEL, ['{}']);
    process.stdout.write(`seeded ${SCHEMA} from billing: ${rows} rows read, ${written} written (older or equal versions kept)\n`);
  } finally {
    await databases.close();
  }
}

main().catch((err) => {
  process.stderr.write(`seed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
