import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openServiceDatabases } from '../index';

// The first open runs initdb inside WebAssembly: allow a slow, busy machine.
jest.setTimeout(300_000);

/** The scenario of test-fixtures/shared-session.js, run on the built package (npm run build first). */
async function runScenario(dataDir: string): Promise<Record<string, any>> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, '../../test-fixtures/shared-session.js')], {
    env: { ...process.env, DATA_DIR: dataDir },
    timeout: 280_000,
  });
  return JSON.parse(stdout);
}

describe('one embedded PGlite database shared by the services of a process', () => {
  let dataDir: string;
  let seen: Record<string, any>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-embedded-db-'));
    seen = await runScenario(dataDir);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps each service on its own schema of the one database, switching the search path between them', () => {
    expect(seen.separate).toEqual({ alpha: ['a1', 'a2'], beta: ['b1'] });
    expect(seen.tableSchemas).toEqual(['alpha', 'beta']);
    expect(seen.description).toBe(`embedded PGlite in ${path.join(dataDir, 'pglite')}`);
  });

  it('runs a statement of one service only after the open transaction of another has ended, never inside it', () => {
    expect(seen.rollbackError).toBe('business rule failed');
    expect(seen.events).toEqual(['alpha rolls back', 'beta inserted']);
    expect(seen.afterRollback).toEqual({ alpha: ['a1', 'a2'], beta: ['b-kept', 'b1'] });
  });

  it('runs with small shared buffers and 1 MB WAL segments', () => {
    expect(seen.settings).toEqual({ shared_buffers: '16MB', wal_segment_size: '1MB' });
  });

  it('refuses a data directory with one database per service (the earlier layout) and names what to move', async () => {
    const old = mkdtempSync(path.join(os.tmpdir(), 'billstream-embedded-old-'));
    try {
      mkdirSync(path.join(old, 'wallet'));
      writeFileSync(path.join(old, 'wallet', 'PG_VERSION'), '17\n');
      await expect(openServiceDatabases({ dataDir: old })).rejects.toThrow(/one embedded database per service \(wallet\/\).*move those directories/);
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });
});
