/**
 * How a bench states its figures for issue #34: as ratios to the ceilings measured in the same
 * run (bench/limits/ceilings.js) and as CPU µs per operation per process, read from /proc.
 *
 *   const meter = cpuMeter({ gateway: pidA, billing: pidB });   // Postgres and Kafka by name
 *   ... the measured work of `ops` operations ...
 *   const cpu = meter.perOp(ops);  // { gateway: 48.1, billing: 20.3, postgres: 51.0, kafka: 13.2, total: 132.6 }
 */
const fs = require('node:fs');

const TICK_S = 0.01;

function statTicks(stat) {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds (user + system) one process has used; 0 once it is gone. */
function processCpu(pid) {
  try {
    return statTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')) * TICK_S;
  } catch {
    return 0;
  }
}

/** CPU seconds of every process whose command matches (`postgres`; `java` running Kafka). */
function byCommand(match) {
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (match(comm, entry)) ticks += statTicks(stat);
    } catch {
      // the process ended
    }
  }
  return ticks * TICK_S;
}

const postgresCpu = () => byCommand((comm) => comm === 'postgres');
const kafkaCpu = () => byCommand((comm, pid) => comm === 'java' && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka'));

/**
 * A CPU meter from now: `pids` names the bench's node processes; Postgres and Kafka are counted
 * by name (every backend, so nothing else may run on the machine). `perOp(ops)` answers µs per
 * operation per process and their total; `cores(seconds)` the cores each kept busy.
 */
function cpuMeter(pids) {
  const read = () => {
    const out = {};
    for (const [name, pid] of Object.entries(pids)) out[name] = processCpu(pid);
    out.postgres = postgresCpu();
    out.kafka = kafkaCpu();
    return out;
  };
  const before = read();
  const used = () => {
    const after = read();
    return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  };
  return {
    used,
    perOp(ops) {
      const u = used();
      const out = Object.fromEntries(Object.entries(u).map(([k, s]) => [k, round((s * 1e6) / ops, 1)]));
      out.total = round((Object.values(u).reduce((a, b) => a + b, 0) * 1e6) / ops, 1);
      return out;
    },
    cores(seconds) {
      return Object.fromEntries(Object.entries(used()).map(([k, s]) => [k, round(s / seconds, 2)]));
    },
  };
}

/** `figure / ceiling`, rounded to 2 digits, with both named: `{ value, ceiling, ratio }`. */
function ratio(value, ceiling) {
  return { value, ceiling, ratio: round(value / ceiling, 2) };
}

/**
 * Postgres' work by statement (pg_stat_statements: the server must preload it,
 * `shared_preload_libraries = 'pg_stat_statements'`; without it both calls answer undefined).
 * `reset` clears the counters; `top` answers the statements of database `dbName` that took the
 * most execution time since, as ms per operation, with their calls per operation.
 */
async function statements(adminUrl) {
  const { Client } = require('pg');
  const run = async (sql, params) => {
    const c = new Client({ connectionString: adminUrl });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows;
    } finally {
      await c.end();
    }
  };
  let available = true;
  try {
    await run('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await run('SELECT 1 FROM pg_stat_statements LIMIT 1');
  } catch {
    available = false;
  }
  return {
    available,
    async reset() {
      if (available) await run('SELECT pg_stat_statements_reset()');
    },
    async top(dbName, ops, n = 12) {
      if (!available) return undefined;
      const rows = await run(
        `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::bigint AS calls, total_exec_time AS ms, sum(total_exec_time) OVER () AS all_ms,
                sum(total_plan_time) OVER () AS all_plan_ms
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY total_exec_time DESC`,
        [dbName],
      );
      const all = rows.length > 0 ? Number(rows[0].all_ms) : 0;
      return {
        exec_ms_per_op: round(all / ops, 3),
        // Planning, apart from the execution: 0 unless pg_stat_statements.track_planning is on.
        plan_ms_per_op: rows.length > 0 ? round(Number(rows[0].all_plan_ms) / ops, 3) : 0,
        top: rows.slice(0, n).map((r) => ({ ms_per_op: round(Number(r.ms) / ops, 3), calls_per_op: round(Number(r.calls) / ops, 2), share: round(Number(r.ms) / all, 3), query: r.query.slice(0, 160) })),
      };
    },
  };
}

function cpuModel() {
  return (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) || [])[1] || 'unknown';
}

function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

module.exports = { cpuMeter, processCpu, postgresCpu, kafkaCpu, ratio, cpuModel, statements };
