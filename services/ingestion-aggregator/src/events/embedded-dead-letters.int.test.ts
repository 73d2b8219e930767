import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { poisonRecords } from '../testing/poison';

const SCRIPT = path.resolve(__dirname, '../../dist/testing/embedded-poison.js');

/**
 * The embedded default stores on PGlite, which answers JSON nested about 6,000 levels deep
 * with an empty result and a broken session instead of an error: the handler must dead-letter
 * every kind of unstorable record there too and keep working. Runs the built handler in a
 * child process (jest cannot load PGlite); `npm run build` first.
 */
describe('usage-events dead letters on embedded PGlite', () => {
  it('stores the good records around every kind of unstorable one, and the database stays usable', () => {
    if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} is missing: run npm run build first`);
    const run = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const bad = poisonRecords('embedded');
    expect(JSON.parse(run.stdout)).toEqual({
      stored: ['e-1', 'e-2', 'e-3'],
      deadLetterCodes: bad.map((b) => b.code),
      deadLettered: bad.length,
      totalEvents: 3,
    });
  });
});
