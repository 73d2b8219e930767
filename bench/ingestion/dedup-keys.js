#!/usr/bin/env node
// The dedup record at scale (ADR 0053): the same KEYS dedup keys held in the format before
// migration 009 (`text`: tenant, environment and event id as texts, with the event's timestamp;
// primary key on the three texts), in its format (`scoped`: 8 bytes hashed from tenant and
// environment, and the event id) and in the one rejected (`hashed`: 16 bytes of SHA-256 of the
// three texts), each in 8 hash partitions as `event_keys`, filled with time-ordered ids; then NEW keys inserted into each in batches of 1,000 as the store
// statement claims them, once with ids in time order (the gateway's ULIDs, UUIDv7) and once with
// random ids. Reports bytes per key, and per phase rows/s, the backend's CPU µs per key (from
// /proc) and the WAL bytes per key (a CHECKPOINT before each phase, so first touches of pages
// write them whole, as in steady state).
//
//   npx tsc -b tsconfig.build.json && KEYS=20000000 node bench/ingestion/dedup-keys.js
//   KEYS (20,000,000), NEW (250,000), FORMATS (text,scoped,hashed), WAL_COMPRESSION (the server's; e.g. lz4:
//   full-page images compressed), KEEP_DB=1
const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { eventScopeSql } = require('@billstream/ingestion-aggregator');
const { ADMIN_URL, adminQuery } = require('../common');
const { cpuModel } = require('../limits/report');

const KEYS = Number(process.env.KEYS || 20_000_000);
const NEW = Number(process.env.NEW || 250_000);
const PARTITIONS = 8;
const ONLY = (process.env.FORMATS || 'text,scoped,hashed').split(',');
const WAL_COMPRESSION = process.env.WAL_COMPRESSION || '';
// The scope as migration 009 keeps it (8 bytes of SHA-256 of tenant and environment).
const SCOPE_SQL = (t) => eventScopeSql(t, "'production'");
// The format measured and rejected (ADR 0053): 16 bytes of SHA-256 of the three texts.
const eventKeySql = (t, e, id) =>
  `encode(substr(sha256(convert_to(length(${t}) || ':' || ${t} || length(${e}) || ':' || ${e} || ${id}, 'UTF8')), 1, 16), 'hex')::uuid`;
// Time-ordered ids of 28 characters, as `evt_` + a ULID would be.
const ORDERED_ID = `'evt_' || lpad(to_hex(i), 24, '0')`;
const FORMATS = {
  text: {
    create: 'CREATE TABLE keys_text (tenant_id text NOT NULL, environment_id text NOT NULL, event_id text NOT NULL, timestamp timestamptz NOT NULL, PRIMARY KEY (tenant_id, environment_id, event_id)) PARTITION BY HASH (tenant_id, environment_id, event_id)',
    fill: (from, to) => `INSERT INTO keys_text SELECT 'tenant-' || (i % 20), 'production', ${ORDERED_ID}, now() FROM generate_series(${from}, ${to}) i`,
    insert: `INSERT INTO keys_text SELECT 'tenant-' || (i % 20), 'production', id, now() FROM unnest($1::text[], $2::int[]) AS u(id, i) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING`,
  },
  scoped: {
    create: 'CREATE TABLE keys_scoped (scope bigint NOT NULL, event_id text NOT NULL, PRIMARY KEY (scope, event_id)) PARTITION BY HASH (scope, event_id)',
    fill: (from, to) => `INSERT INTO keys_scoped SELECT ${SCOPE_SQL("'tenant-' || (i % 20)")}, ${ORDERED_ID} FROM generate_series(${from}, ${to}) i`,
    insert: `INSERT INTO keys_scoped SELECT ${SCOPE_SQL("'tenant-' || (i % 20)")}, id FROM unnest($1::text[], $2::int[]) AS u(id, i) ORDER BY 1, 2 ON CONFLICT DO NOTHING`,
  },
  hashed: {
    create: 'CREATE TABLE keys_hashed (key uuid PRIMARY KEY) PARTITION BY HASH (key)',
    fill: (from, to) => `INSERT INTO keys_hashed SELECT ${eventKeySql("'tenant-' || (i % 20)", "'production'", ORDERED_ID)} FROM generate_series(${from}, ${to}) i`,
    insert: `INSERT INTO keys_hashed SELECT ${eventKeySql("'tenant-' || (i % 20)", "'production'", 'id')} FROM unnest($1::text[], $2::int[]) AS u(id, i) ORDER BY 1 ON CONFLICT DO NOTHING`,
  },
};
const orderedId = (i) => `evt_${i.toString(16).padStart(24, '0')}`;
// A random client's next ids land anywhere among its earlier ones: after a random earlier id.
const randomId = () => `${orderedId(Math.floor(Math.random() * KEYS))}r`;

function backendCpuS(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function phase(c, pid, sql, ids, offset) {
  await c.query('CHECKPOINT');
  const wal0 = (await c.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
  const cpu0 = backendCpuS(pid);
  const t0 = performance.now();
  for (let at = 0; at < ids.length; at += 1000) {
    const part = ids.slice(at, at + 1000);
    await c.query(sql, [part, part.map((_, j) => offset + at + j)]);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = backendCpuS(pid) - cpu0;
  const wal = (await c.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS b', [wal0])).rows[0].b;
  return { rows_per_s: Math.round(ids.length / seconds), cpu_us_per_key: +((cpu * 1e6) / ids.length).toFixed(1), wal_bytes_per_key: Math.round(Number(wal) / ids.length) };
}

async function main() {
  const name = `bench_dedup_keys_${Date.now()}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const c = new Client({ connectionString: url.toString() });
  await c.connect();
  const out = { cpu: cpuModel(), keys: KEYS, new_keys: NEW, wal_compression: WAL_COMPRESSION || 'server default', formats: {} };
  try {
    const pid = (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    if (WAL_COMPRESSION) await c.query(`SET wal_compression = ${WAL_COMPRESSION}`);
    for (const [format, f] of Object.entries(FORMATS).filter(([name]) => ONLY.includes(name))) {
      const table = `keys_${format}`;
      await c.query(f.create);
      for (let i = 0; i < PARTITIONS; i += 1) {
        await c.query(`CREATE TABLE ${table}_h${i} PARTITION OF ${table} FOR VALUES WITH (MODULUS ${PARTITIONS}, REMAINDER ${i})`);
      }
      const t0 = performance.now();
      for (let from = 0; from < KEYS; from += 1_000_000) await c.query(f.fill(from, Math.min(KEYS, from + 1_000_000) - 1));
      const fillS = (performance.now() - t0) / 1000;
      await c.query(`VACUUM ANALYZE ${table}`);
      const bytes = Number((await c.query(`SELECT sum(pg_total_relation_size(inhrelid))::bigint AS b FROM pg_inherits WHERE inhparent = '${table}'::regclass`)).rows[0].b);
      const ordered = Array.from({ length: NEW }, (_, j) => orderedId(KEYS + j));
      const random = Array.from({ length: NEW }, () => randomId());
      const result = {
        fill_rows_per_s: Math.round(KEYS / fillS),
        bytes_per_key: Math.round(bytes / KEYS),
        ordered_ids: await phase(c, pid, f.insert, ordered, KEYS),
        random_ids: await phase(c, pid, f.insert, random, KEYS + NEW),
      };
      out.formats[format] = result;
      console.log(JSON.stringify({ [format]: result }));
      await c.query(`DROP TABLE ${table}`);
    }
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await c.end();
    if (process.env.KEEP_DB !== '1') await adminQuery(`DROP DATABASE ${name}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
