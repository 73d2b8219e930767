import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { KAFKA_TIMING_DEFAULTS } from '@billstream/bus';
import { commonServiceEnv, loadConfig } from '@billstream/config';
import { kafkaTimingOf, type CommonServiceConfig } from './run-service';

describe('Kafka timing of a service process', () => {
  const base = { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092', INTERNAL_TOKEN: randomBytes(24).toString('hex'), PORT: '1' };
  const schema = z.object({ ...commonServiceEnv, PORT: z.coerce.number() });

  it('unset variables give the bus defaults (6 s session, 1 s heartbeat, 10 s rebalance, 1 s retry cap, 1 s fetch wait, fetches answered by the first byte)', () => {
    expect(kafkaTimingOf(loadConfig(schema, base) as CommonServiceConfig)).toEqual(KAFKA_TIMING_DEFAULTS);
    expect(KAFKA_TIMING_DEFAULTS).toEqual({ sessionTimeoutMs: 6000, heartbeatIntervalMs: 1000, rebalanceTimeoutMs: 10_000, retryMaxMs: 1000, fetchMaxWaitMs: 1000, fetchMinBytes: 1 });
  });

  it('the KAFKA_* variables set each value', () => {
    const config = loadConfig(schema, {
      ...base,
      KAFKA_SESSION_TIMEOUT_MS: '9000',
      KAFKA_HEARTBEAT_INTERVAL_MS: '2000',
      KAFKA_REBALANCE_TIMEOUT_MS: '20000',
      KAFKA_RETRY_MAX_MS: '500',
      KAFKA_FETCH_MAX_WAIT_MS: '250',
      KAFKA_FETCH_MIN_BYTES: '16384',
    }) as CommonServiceConfig;
    expect(kafkaTimingOf(config)).toEqual({ sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000, rebalanceTimeoutMs: 20_000, retryMaxMs: 500, fetchMaxWaitMs: 250, fetchMinBytes: 16384 });
  });
});
