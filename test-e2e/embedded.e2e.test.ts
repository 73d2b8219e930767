import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, freePort, waitFor } from '@billstream/testing';

const ROOT = path.resolve(__dirname, '..');

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** `npm start` exactly as a new user runs it: no DATABASE_URL, no KAFKA_BROKERS. */
function npmStart(dataDir: string, port: number): Started {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  const child = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  return { child, output: () => out };
}

async function stop(started: Started): Promise<void> {
  if (started.child.exitCode !== null || !started.child.pid) return;
  const exited = new Promise((r) => started.child.once('exit', r));
  process.kill(-started.child.pid, 'SIGTERM');
  await exited;
}

// First starts run initdb for six embedded databases: allow a slow, busy machine.
jest.setTimeout(600_000);

describe('npm start: the embedded default', () => {
  let dataDir: string;
  let running: Started | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-embedded-'));
  });
  afterAll(async () => {
    if (running) await stop(running);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts from an empty data directory, prints a development key, serves /healthz and answers a call made with that key', async () => {
    const port = await freePort();
    running = npmStart(dataDir, port);
    const printed = await waitFor(() => /API key:\s+(bsk_\S+)/.exec(running!.output())?.[1], {
      timeoutMs: 540_000,
      intervalMs: 250,
      what: 'the printed API key',
    }).catch((err) => {
      throw new Error(`${String(err)}\n${running!.output()}`);
    });
    expect(running.output()).toContain(`Billstream is running at http://127.0.0.1:${port}`);
    expect(readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8').trim()).toBe(printed);

    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);

    const api = new ApiClient(`http://127.0.0.1:${port}`, printed);
    const keys = await api.get('/v1/api-keys');
    expect(keys.status).toBe(200);
    expect(keys.body.items[0]).toMatchObject({ tenant_id: 'default', environment_id: 'development', permissions: ['*'] });
    const anonymous = await api.withKey(undefined).get('/v1/api-keys');
    expect(anonymous.status).toBe(401);
    // Billing runs in the embedded default too (its migrations on PGlite included).
    const plan = await api.post('/v1/plans', {
      name: 'Starter',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '9', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    });
    expect(plan.status).toBe(201);

    // A second start on the same directory keeps its data and the same key.
    await stop(running);
    running = npmStart(dataDir, port);
    await waitFor(() => running!.output().includes('Billstream is running'), { timeoutMs: 540_000, intervalMs: 250, what: 'restart' });
    expect(running.output()).toContain(printed);
    const again = await api.get('/v1/api-keys');
    expect(again.status).toBe(200);
    expect(again.body.pagination.total).toBe(keys.body.pagination.total);
    expect((await api.get(`/v1/plans/${plan.body.id}`)).body.prices[0].amount).toBe('9');
  });

  it('refuses a bad setting at start with a message naming the variable', () => {
    const env = { ...process.env, PORT: 'not-a-port', DATA_DIR: dataDir };
    const result = spawnSync(process.execPath, [path.join(ROOT, 'services/standalone/dist/main.js')], { env, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT');
  });
});
