import { z } from 'zod';
import { ConfigError, checkKafkaTiming, commonServiceEnv, env, loadConfig } from './index';

describe('loadConfig', () => {
  const schema = z.object({ PORT: env.port(8080), FLAG: env.bool(false), LIST: env.list().optional() });

  it('applies defaults and converts values', () => {
    expect(loadConfig(schema, {})).toEqual({ PORT: 8080, FLAG: false });
    expect(loadConfig(schema, { PORT: '9000', FLAG: 'true', LIST: 'a, b,,c' })).toEqual({ PORT: 9000, FLAG: true, LIST: ['a', 'b', 'c'] });
  });

  it('fails naming every bad variable', () => {
    let error: unknown;
    try {
      loadConfig(z.object(commonServiceEnv), { DATABASE_URL: 'mysql://x', KAFKA_BROKERS: 'nohostport', INTERNAL_TOKEN: 'short' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('KAFKA_BROKERS');
    expect(message).toContain('INTERNAL_TOKEN');
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig(schema, { PORT: '' })).toEqual({ PORT: 8080, FLAG: false });
  });

  it('refuses a Kafka heartbeat interval that is not below the session timeout, naming the variable', () => {
    const schema = z.object(commonServiceEnv).superRefine(checkKafkaTiming);
    const base = { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092', INTERNAL_TOKEN: 'x'.repeat(16) };
    expect(() => loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '6000' })).toThrow(
      /KAFKA_HEARTBEAT_INTERVAL_MS: must be lower than KAFKA_SESSION_TIMEOUT_MS/,
    );
    expect(() => loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '500' })).toThrow(/KAFKA_SESSION_TIMEOUT_MS/);
    expect(loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '10000', KAFKA_HEARTBEAT_INTERVAL_MS: '3000' })).toMatchObject({
      KAFKA_SESSION_TIMEOUT_MS: 10_000,
      KAFKA_HEARTBEAT_INTERVAL_MS: 3000,
    });
  });

  it('refuses a Kafka fetch wait above half the session timeout, naming the variable (members heartbeat between fetches)', () => {
    const schema = z.object(commonServiceEnv).superRefine(checkKafkaTiming);
    const base = { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092', INTERNAL_TOKEN: 'x'.repeat(16) };
    expect(() => loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_FETCH_MAX_WAIT_MS: '3001' })).toThrow(
      /KAFKA_FETCH_MAX_WAIT_MS: must be at most half of KAFKA_SESSION_TIMEOUT_MS/,
    );
    expect(() => loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '1500' })).toThrow(/KAFKA_FETCH_MAX_WAIT_MS/);
    expect(loadConfig(schema, base)).toMatchObject({ KAFKA_FETCH_MAX_WAIT_MS: 1000 });
    expect(loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_FETCH_MAX_WAIT_MS: '3000' })).toMatchObject({ KAFKA_FETCH_MAX_WAIT_MS: 3000 });
  });
});
