/* Runs two "services" (schemas alpha and beta) on one embedded database in DATA_DIR and
 * prints what they saw as JSON, for embedded.int.test.ts (PGlite loads modules with dynamic
 * import(), which Jest's module sandbox refuses, so this runs as a process of its own). */
const { openServiceDatabases } = require('@billstream/db');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const databases = await openServiceDatabases({ dataDir: process.env.DATA_DIR });
  const alpha = databases.forSchema('alpha');
  const beta = databases.forSchema('beta');
  const ids = async (db) => db('things').orderBy('id').pluck('id');
  try {
    for (const [schema, db] of [['alpha', alpha], ['beta', beta]]) {
      await db.raw('CREATE SCHEMA ??', [schema]);
      await db.schema.createTable('things', (t) => t.text('id').primary());
    }
    // Statements of both services at once: each lands in its own schema.
    await Promise.all([alpha('things').insert({ id: 'a1' }), beta('things').insert({ id: 'b1' }), alpha('things').insert({ id: 'a2' })]);
    const separate = { alpha: await ids(alpha), beta: await ids(beta) };
    const tableSchemas = await alpha('information_schema.tables').where({ table_name: 'things' }).orderBy('table_schema').pluck('table_schema');

    // A statement of beta issued while a transaction of alpha is open, which then rolls back.
    const events = [];
    const rolledBack = alpha
      .transaction(async (trx) => {
        await trx('things').insert({ id: 'a-doomed' });
        await sleep(300);
        events.push('alpha rolls back');
        throw new Error('business rule failed');
      })
      .catch((err) => err.message);
    await sleep(50);
    const inserted = beta('things')
      .insert({ id: 'b-kept' })
      .then(() => events.push('beta inserted'));
    const rollbackError = await rolledBack;
    await inserted;
    const show = async (name) => (await alpha.raw(`SHOW ${name}`)).rows[0][name];
    process.stdout.write(
      JSON.stringify({
        separate,
        tableSchemas,
        description: databases.description,
        rollbackError,
        events,
        afterRollback: { alpha: await ids(alpha), beta: await ids(beta) },
        settings: { shared_buffers: await show('shared_buffers'), wal_segment_size: await show('wal_segment_size') },
      }),
    );
  } finally {
    await databases.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
