import { Client } from 'pg';
import { commonServiceEnv } from '@billstream/config';
import { capturingLogger } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * A 5xx of a service behind the gateway is logged with the error's message, stack and Postgres
 * code and cause (ADR 0034): the customer table is renamed away, `GET /v1/customers` fails in
 * the customer service, and its log line says why.
 */
describe('a 5xx through the gateway is logged with its cause (real Postgres)', () => {
  let lines: Array<Record<string, any>> = [];
  let stack: IntegrationStack;

  beforeAll(async () => {
    const captured = capturingLogger('stack');
    const logger = captured.logger;
    lines = captured.lines;
    // Calls forwarded over HTTP, as when the services run apart.
    stack = await startIntegrationStack({ inProcessBus: true, extra: { logger, inProcessCalls: false } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 500 with a reference only, and logs that reference with the driver error, its code and stack', async () => {
    expect((await stack.api.get('/v1/customers')).status).toBe(200);
    const sql = new Client({ connectionString: stack.database.url });
    await sql.connect();
    try {
      await sql.query('ALTER TABLE customer.customers RENAME TO customers_gone');
    } finally {
      await sql.end();
    }

    const res = await stack.api.get('/v1/customers');
    expect(res.status).toBe(500);
    const reference = res.body.error.details.reference as string;
    expect(JSON.stringify(res.body)).not.toContain('customers_gone');
    expect(JSON.stringify(res.body)).not.toContain('does not exist');

    const line = lines.find((l) => l.level === 'error' && l.ref === reference);
    expect(line).toMatchObject({ message: 'request failed', service: 'customer' });
    // The driver error, itself or as the cause of a DatabaseError.
    const driver = line!.err.code === '42P01' ? line!.err : line!.err.cause;
    expect(driver).toMatchObject({ code: '42P01', message: expect.stringContaining('does not exist') });
    expect(line!.err.message).toEqual(expect.any(String));
    expect(line!.err.stack).toMatch(/\n\s+at /);
  });

  it("makes its own internal token one a service process would accept: 48 random hex characters, no placeholder (ADR 0034)", () => {
    const token = stack.embedded.services.internalToken;
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect(commonServiceEnv.INTERNAL_TOKEN.safeParse(token).success).toBe(true);
  });
});
