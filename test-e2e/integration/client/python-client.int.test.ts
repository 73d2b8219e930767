import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startEmbedded, type Embedded } from '@billstream/standalone';
import { createTestDatabase, freePort, randomKey, testLogger, type TestDatabase } from '@billstream/testing';
import { TEST_ENVIRONMENT, TEST_TENANT } from '../../support/stack';

// The Python client (clients/python, ADR 0060) against a real Billstream: the embedded default
// started here on a database of its own, and its unittest suite (clients/python/tests) run by
// python3 against it. The suite stops and starts the server through a small control listener
// of this test (POST /stop, POST /start: the same port and DATA_DIR), for the batcher's
// restart case. mypy type-checks the package (Debian's python3-mypy; .ci/run installs it).

const ROOT = path.resolve(__dirname, '../../..');
const PACKAGE = path.join(ROOT, 'clients', 'python');

interface Run {
  code: number | null;
  output: string;
}

/** Runs a command without blocking this process's event loop (the server lives in it). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** mypy on PATH, or as a module of a python3 that has it (Debian's python3-mypy is /usr/bin/python3's). */
function findMypy(): string[] | undefined {
  if (spawnSync('mypy', ['--version']).status === 0) return ['mypy'];
  for (const python of ['python3', '/usr/bin/python3']) {
    if (spawnSync(python, ['-m', 'mypy', '--version']).status === 0) return [python, '-m', 'mypy'];
  }
  return undefined;
}

describe('the Python client (clients/python) against the embedded default', () => {
  let database: TestDatabase;
  let embedded: Embedded | undefined;
  let control: http.Server;
  let controlUrl: string;
  let port: number;
  const apiKey = randomKey();

  const start = () =>
    startEmbedded({
      logger: testLogger('python-client'),
      dataDir: path.join(os.tmpdir(), `billstream-test-${database.name}`),
      port,
      host: '127.0.0.1',
      databaseUrl: database.url,
      rateLimitRps: 100_000,
      rateLimitBurst: 100_000,
      bootstrap: { key: apiKey, tenantId: TEST_TENANT, environmentId: TEST_ENVIRONMENT },
      // Deliveries to the suite's receiver on 127.0.0.1 (ADR 0033: loopback only when allowed).
      env: { WEBHOOK_ALLOW_INSECURE: 'true' },
    });

  beforeAll(async () => {
    database = await createTestDatabase();
    port = await freePort();
    embedded = await start();
    control = http.createServer((req, res) => {
      const action = req.url === '/stop' ? async () => (await embedded?.stop(), (embedded = undefined)) : req.url === '/start' ? async () => (embedded ??= await start()) : undefined;
      if (req.method !== 'POST' || !action) return void res.writeHead(404).end();
      action().then(
        () => res.writeHead(204).end(),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    });
    await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));
    controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    await new Promise((r) => control?.close(r));
    await embedded?.stop();
    await database?.drop();
  }, 60_000);

  it('passes its unittest suite: every resource family, signed webhooks, retries, the batcher across a restart', async () => {
    const env = {
      ...process.env,
      PYTHONPATH: PACKAGE,
      PYTHONDONTWRITEBYTECODE: '1',
      BILLSTREAM_TEST_BASE_URL: `http://127.0.0.1:${port}`,
      BILLSTREAM_TEST_API_KEY: apiKey,
      BILLSTREAM_TEST_CONTROL_URL: controlUrl,
    };
    const result = await run('python3', ['-m', 'unittest', 'discover', '-s', path.join(PACKAGE, 'tests'), '-t', PACKAGE, '-v'], env, 150_000);
    if (result.code !== 0) throw new Error(`python3 -m unittest failed (exit ${result.code}):\n${result.output}`);
    const ran = /Ran (\d+) tests?/.exec(result.output);
    expect(Number(ran?.[1])).toBeGreaterThanOrEqual(10);
    // Every case ran against the server: none skipped for want of it.
    expect(result.output).not.toMatch(/skipped/);
    expect(result.output).toMatch(/\nOK\n?/);
  }, 180_000);

  it('type-checks with mypy --strict (Python 3.10 rules)', async () => {
    const mypy = findMypy();
    if (!mypy) throw new Error('mypy is not installed: apt-get install python3-mypy (.ci/run does)');
    const result = await run(mypy[0], [...mypy.slice(1), '--strict', '--python-version', '3.10', '--no-incremental', path.join(PACKAGE, 'billstream'), path.join(PACKAGE, 'tests')], process.env, 120_000);
    if (result.code !== 0) throw new Error(`mypy failed:\n${result.output}`);
    expect(result.output).toMatch(/Success: no issues found/);
  }, 130_000);
});
