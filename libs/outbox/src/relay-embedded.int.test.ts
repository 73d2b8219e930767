import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

// The first open runs initdb inside WebAssembly: allow a slow, busy machine.
jest.setTimeout(300_000);

describe('outbox relay on the embedded database, with the in-process bus (built packages: npm run build first)', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-relay-embedded-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('publishes to a consumer of another service on the same database session, and marks the rows, without waiting for itself', async () => {
    // Were the relay to hold its transaction while publishing, the consumer would wait for the
    // session the relay holds until the acquire timeout (60 s) failed the round.
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, '../test-fixtures/relay-embedded.js')], {
      env: { ...process.env, DATA_DIR: dataDir },
      timeout: 280_000,
    });
    const seen = JSON.parse(stdout);
    expect(seen.published).toEqual([8, 8, 4, 0]);
    expect(seen.applied).toEqual(seen.written);
    expect(seen.applied).toHaveLength(20);
    expect(seen.unpublished).toBe(0);
    expect(seen.processed).toBe(20);
  });
});
