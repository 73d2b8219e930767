import * as billing from '@billstream/billing';
import { migrate, openDb } from '@billstream/db';
import * as customer from '@billstream/customer';
import * as gateway from '@billstream/gateway';
import * as ingestion from '@billstream/ingestion-aggregator';
import * as wallet from '@billstream/wallet';
import * as webhook from '@billstream/webhook-dispatcher';

/** Runs every service's migrations against DATABASE_URL (or the embedded databases in DATA_DIR). */
async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR ?? '.data';
  for (const m of [gateway, customer, wallet, ingestion, webhook, billing]) {
    const db = await openDb({
      databaseUrl: process.env.DATABASE_URL,
      pgliteDir: process.env.DATABASE_URL ? undefined : `${dataDir}/${m.SCHEMA}`,
      schema: m.SCHEMA,
    });
    try {
      await migrate(db, m.SCHEMA, m.migrations);
      process.stdout.write(`migrated ${m.SCHEMA}\n`);
    } finally {
      await db.destroy();
    }
  }
}

main().catch((err) => {
  process.stderr.write(`migrate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
