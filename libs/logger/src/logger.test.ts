import { Writable } from 'node:stream';
import winston from 'winston';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { inSpan, startTracing, stopTracing } from '@billstream/observability';
import { createLogger } from './index';

/** Log lines carry trace_id when written inside a traced span (ADR 0020), and only then. */
describe('logger trace_id', () => {
  afterEach(() => stopTracing());

  function capture() {
    const lines: Array<Record<string, unknown>> = [];
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
