#!/usr/bin/env node
/**
 * Stops one service container of the running compose project and starts it again while usage
 * events flow through the gateway (deploy/compose/ci.sh): every event the gateway accepted (202)
 * must be counted by the meter exactly once afterwards. Refusals while the container is down are
 * allowed (the client was told); a lost or a doubled accepted event fails.
 *
 *   BASE_URL=http://127.0.0.1:8080 node deploy/compose/restart-under-traffic.js ingestion-aggregator
 *
 * The API key: BILLSTREAM_API_KEY, else the one in the .env of `npm run compose:env`.
 */
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { parseEnv } = require('../../scripts/compose-env');

const DOCKER = process.env.DOCKER ?? '/usr/bin/docker';
const PROJECT = process.env.COMPOSE_PROJECT_NAME ?? 'billstream';
const BASE_URL = (process.env.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const KEY = apiKey();
const SERVICE = process.argv[2] ?? 'ingestion-aggregator';
const run = `restart-${Date.now().toString(36)}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const docker = (...args) => execFileSync(DOCKER, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const log = (s) => console.log(`restart-under-traffic: ${s}`);

/** BILLSTREAM_API_KEY of the environment, else of the .env of `npm run compose:env`; there is no default key (ADR 0034). */
function apiKey() {
  if (process.env.BILLSTREAM_API_KEY) return process.env.BILLSTREAM_API_KEY;
  const file = path.resolve(__dirname, '..', '..', '.env');
  const key = fs.existsSync(file) ? parseEnv(fs.readFileSync(file, 'utf8')).BILLSTREAM_API_KEY : undefined;
  if (key) return key;
  console.error('restart-under-traffic: no API key: set BILLSTREAM_API_KEY, or run beside the .env of `npm run compose:env`');
  process.exit(2);
}

async function call(method, path, body) {
  const res = await fetch(BASE_URL + path, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: globalThis.AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function must(method, path, body, status) {
  const res = await call(method, path, body);
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function health(id) {
  return JSON.parse(docker('inspect', id))[0].State.Health?.Status;
}

async function main() {
  const id = docker('ps', '-q', '--filter', `label=com.docker.compose.project=${PROJECT}`, '--filter', `label=com.docker.compose.service=${SERVICE}`);
  if (!id) throw new Error(`no running container of ${SERVICE} in ${PROJECT}`);
  const external = `${run}-customer`;
  await must('POST', '/v1/customers', { external_customer_id: external }, 201);
  const meter = await must('POST', '/v1/meters', { name: `${run} calls`, event_name: `${run}_call`, aggregation: { type: 'COUNT' } }, 201);
  const start = new Date(Date.now() - 60_000);

  const accepted = new Set();
  const refused = new Map();
  let sending = true;
  let seq = 0;
  const sender = async (worker) => {
    while (sending) {
      const n = (seq += 1);
      const events = Array.from({ length: 50 }, (_, i) => ({
        event_id: `${run}-${worker}-${n}-${i}`,
        event_name: `${run}_call`,
        external_customer_id: external,
        timestamp: new Date(start.getTime() + 1000 + (n % 1000)).toISOString(),
      }));
      try {
        const res = await call('POST', '/v1/events/bulk', { events });
        if (res.status === 202) for (const e of events) accepted.add(e.event_id);
        else refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
      } catch (err) {
        refused.set(err.name, (refused.get(err.name) ?? 0) + 1);
      }
      await sleep(25);
    }
  };
  const senders = [1, 2, 3].map(sender);
  await sleep(3000);
  const before = accepted.size;
  let t0 = Date.now();
  docker('stop', '-t', '10', id);
  log(`${SERVICE} stopped in ${Date.now() - t0} ms (${before} events accepted before)`);
  await sleep(3000);
  t0 = Date.now();
  docker('start', id);
  const deadline = Date.now() + 120_000;
  while (health(id) !== 'healthy') {
    if (Date.now() > deadline) throw new Error(`${SERVICE} is not healthy 120 s after its start`);
    await sleep(500);
  }
  log(`${SERVICE} started and healthy again in ${Date.now() - t0} ms`);
  await sleep(3000);
  sending = false;
  await Promise.all(senders);
  log(`${accepted.size} events accepted, refusals: ${JSON.stringify(Object.fromEntries(refused))}`);
  if (accepted.size <= before) throw new Error('no event was accepted after the stop');

  const window = { external_customer_id: external, start_time: new Date(start.getTime() - 3600_000).toISOString(), end_time: new Date(Date.now() + 3600_000).toISOString() };
  let value = '0';
  const until = Date.now() + 150_000;
  while (Date.now() < until) {
    const res = await call('POST', `/v1/meters/${meter.id}/usage`, window);
    if (res.status === 200) value = res.body.value;
    if (Number(value) >= accepted.size) break;
    await sleep(1000);
  }
  await sleep(2000);
  value = (await must('POST', `/v1/meters/${meter.id}/usage`, window, 200)).value;
  if (Number(value) !== accepted.size) throw new Error(`the meter counts ${value} events, ${accepted.size} were accepted`);
  log(`ok: the meter counts all ${value} accepted events, none lost, none twice`);
}

main().catch((err) => {
  console.error(`restart-under-traffic: FAILED: ${err.message}`);
  process.exit(1);
});
