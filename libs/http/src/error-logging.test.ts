import { capturingLogger } from '@billstream/testing';
import { DatabaseError } from '@billstream/errors';
import { createHttpApp, finishApp } from './app';
import { listen, type Listening } from './server';

/** Every 5xx is logged with the error's message, stack, Postgres fields and cause (ADR 0034). */
describe('a 5xx through the real error middleware and the real logger', () => {
  let lines: Array<Record<string, any>> = [];
  let http: Listening;

  beforeAll(async () => {
    const captured = capturingLogger('test');
    const logger = captured.logger;
    lines = captured.lines;
    const app = createHttpApp({ logger, service: 'test' });
    app.get('/v1/plain', () => {
      const driver = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      throw Object.assign(new Error('could not load the plan', { cause: driver }), { code: '42P01' });
    });
    app.get('/v1/database', async () => {
      const driver = Object.assign(new Error('relation "customer.customers" does not exist'), {
        code: '42P01',
        severity: 'ERROR',
        schema: 'customer',
        table: 'customers',
        routine: 'parserOpenTable',
      });
      throw new DatabaseError('Database operation failed', { cause: driver });
    });
    finishApp(app, logger);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(() => http.close());

  const failed = () => lines.filter((l) => l.level === 'error' && l.message === 'request failed');

  it('writes message, stack, code and the cause of a thrown error; the answer carries only the reference', async () => {
    const res = await fetch(`${http.url}/v1/plain`);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { details: { reference: string } } };
    const [line] = failed().slice(-1);
    expect(line.ref).toBe(body.error.details.reference);
    expect(line.err).toMatchObject({ name: 'Error', message: 'could not load the plan', code: '42P01' });
    expect(line.err.stack).toMatch(/^Error: could not load the plan\n\s+at /);
    expect(line.err.stack).toContain('error-logging.test.ts');
    expect(line.err.cause).toMatchObject({ message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' });
    expect(line.err.cause.stack).toContain('error-logging.test.ts');
    expect(JSON.stringify(body)).not.toContain('ECONNREFUSED');
  });

  it('writes the Postgres fields of a driver error behind a DatabaseError', async () => {
    const res = await fetch(`${http.url}/v1/database`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { internal_error: string } }).error.internal_error).toBe('database_error');
    const [line] = failed().slice(-1);
    expect(line.err).toMatchObject({ name: 'DatabaseError', message: 'Database operation failed', kind: 'database' });
    expect(line.err.cause).toMatchObject({
      message: 'relation "customer.customers" does not exist',
      code: '42P01',
      schema: 'customer',
      table: 'customers',
      severity: 'ERROR',
    });
    expect(line.err.cause.stack).toEqual(expect.any(String));
  });
});
