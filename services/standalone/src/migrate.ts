import * as billing from '@billstream/billing';
import { migrate, openServiceDatabases } from '@billstream/db';
import * as customer from '@billstream/customer';
import * as entitlements from '@billstream/entitlements';
import * as gateway from '@billstream/gateway';
import * as ingestion from '@billstream/ingestion-aggregator';
import * as wallet from '@billstream/wallet';
import * as webhook from '@billstream/webhook-dispatcher';

/** Runs every service's migrations against DATABASE_URL (or the embedded database in DATA_DIR). */
async function main(): Promise<void> {
  const databases = await openServiceDatabases({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? '.data' });
  try {
    for (const m of [gateway, customer, wallet, ingestion, webhook, billing, entitlements]) {
      await migrate(databases.forSchema(m.SCHEMA), m.SCHEMA, m.migrations);
      process.stdout.write(`migrated ${m.SCHEMA}\n`);
    }
  } finally {
    await databases.close();
  }
}

main().catch((err) => {
  process.stderr.write(`migrate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
