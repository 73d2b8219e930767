import { Writable } from 'node:stream';
import winston from 'winston';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { inSpan, startTracing, stopTracing } from '@billstream/observability';
import { createLogger } from './index';

/** A logger whose JSON lines land in `lines`, parsed (libs/testing's capturingLogger cannot be used here: it imports this package). */
function capture() {
  const lines: Array<Record<string, any>> = [];
  const logger = createLogger({ service: 'test' });
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(chunk.toString()));
          done();
        },
      }),
    }),
  );
  return { logger, lines };
}

/** Log lines carry trace_id when written inside a traced span (ADR 0020), and only then. */
describe('logger trace_id', () => {
  afterEach(() => stopTracing());

  it('adds the active trace id inside a span and nothing outside', async () => {
    startTracing({ exporter: new InMemorySpanExporter(), serviceName: 'test' });
    const { logger, lines } = capture();
    logger.info('outside');
    await inSpan('work', {}, async (span) => {
      logger.info('inside', { n: 1 });
      expect(span).toBeDefined();
    });
    expect(lines[0].trace_id).toBeUndefined();
    expect(lines[1].trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('adds nothing when tracing is off', () => {
    const { logger, lines } = capture();
    logger.info('line');
    expect(lines[0]).not.toHaveProperty('trace_id');
  });
});

/** Errors in a line's metadata are written with what they carry (ADR 0034); JSON alone writes `{}`. */
describe('logger errors', () => {
  it('writes an error anywhere in the metadata with message, stack, the Postgres fields and the cause chain', () => {
    const { logger, lines } = capture();
    const pg = Object.assign(new Error('duplicate key value violates unique constraint "plans_code_key"'), {
      code: '23505',
      detail: 'Key (code)=(pro) already exists.',
      constraint: 'plans_code_key',
      table: 'plans',
      schema: 'billing',
    });
    const outer = new Error('could not save the plan', { cause: new Error('insert failed', { cause: pg }) });
    logger.error('failed', { err: outer, nested: { failures: [pg] }, n: 1 });
    const [line] = lines;
    expect(line.err).toMatchObject({ name: 'Error', message: 'could not save the plan' });
    expect(line.err.stack).toContain('logger.test.ts');
    expect(line.err.cause.message).toBe('insert failed');
    expect(line.err.cause.cause).toMatchObject({ code: '23505', detail: 'Key (code)=(pro) already exists.', constraint: 'plans_code_key', table: 'plans', schema: 'billing' });
    expect(line.nested.failures[0]).toMatchObject({ message: pg.message, code: '23505' });
    expect(line.n).toBe(1);
  });

  it('stops at a cause cycle, and leaves metadata without errors as it is', () => {
    const { logger, lines } = capture();
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    const meta = { plain: { x: [1, 2] } };
    logger.warn('cycle', { err: a, ...meta });
    expect(lines[0].err).toMatchObject({ message: 'a', cause: { message: 'b', cause: '[circular]' } });
    expect(lines[0].plain).toEqual({ x: [1, 2] });
  });

  it('still writes an error given as the message (winston.format.errors)', () => {
    const { logger, lines } = capture();
    logger.error(new Error('thrown'));
    expect(lines[0].message).toBe('thrown');
    expect(lines[0].stack).toContain('logger.test.ts');
  });
});

describe('logger service', () => {
  it("names the logger's service, and a child's own service wins (one logger per service in the embedded default)", () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ service: 'billstream' });
    logger.clear();
    logger.add(
      new winston.transports.Stream({
        stream: new Writable({
          write(chunk, _enc, done) {
            lines.push(JSON.parse(chunk.toString()));
            done();
          },
        }),
      }),
    );
    logger.info('root');
    logger.child({ service: 'customer' }).info('child');
    logger.child({ requestId: 'r1' }).info('request');
    expect(lines.map((l) => l.service)).toEqual(['billstream', 'customer', 'billstream']);
    expect(lines[2].requestId).toBe('r1');
  });
});
