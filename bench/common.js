// Helpers shared by the benchmark scripts.
const { Client } = require('pg');

const ADMIN_URL = process.env.ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the admin database (CREATE/DROP DATABASE of a benchmark). */
async function adminQuery(sql) {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** The p-th percentile of an ascending array (nearest rank); NaN when empty. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

module.exports = { ADMIN_URL, adminQuery, percentile };
