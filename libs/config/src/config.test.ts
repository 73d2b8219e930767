import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigError, KNOWN_PLACEHOLDER_SECRETS, checkKafkaTiming, commonServiceEnv, env, isPlaceholderSecret, loadConfig, secretEnv } from './index';

const TOKEN = randomBytes(24).toString('base64url');

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
    const base = { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092', INTERNAL_TOKEN: TOKEN };
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
    const base = { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092', INTERNAL_TOKEN: TOKEN };
    expect(() => loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_FETCH_MAX_WAIT_MS: '3001' })).toThrow(
      /KAFKA_FETCH_MAX_WAIT_MS: must be at most half of KAFKA_SESSION_TIMEOUT_MS/,
    );
    expect(() => loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '1500' })).toThrow(/KAFKA_FETCH_MAX_WAIT_MS/);
    expect(loadConfig(schema, base)).toMatchObject({ KAFKA_FETCH_MAX_WAIT_MS: 1000 });
    expect(loadConfig(schema, { ...base, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_FETCH_MAX_WAIT_MS: '3000' })).toMatchObject({ KAFKA_FETCH_MAX_WAIT_MS: 3000 });
  });
});

describe('secrets (ADR 0034)', () => {
  const schema = z.object(commonServiceEnv);
  const base = { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092' };
  const problemsOf = (vars: Record<string, string>): string => {
    try {
      loadConfig(schema, { ...base, ...vars });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    return '';
  };

  it('refuses an INTERNAL_TOKEN shorter than 32 characters, naming the variable', () => {
    expect(problemsOf({ INTERNAL_TOKEN: randomBytes(31).toString('hex').slice(0, 31) })).toMatch(/INTERNAL_TOKEN: must be at least 32 characters/);
    expect(problemsOf({})).toMatch(/INTERNAL_TOKEN/);
  });

  it.each([
    'compose-internal-token-change-me',
    'replace-with-at-least-32-random-characters',
    'bsk_compose_local_development_key',
    ...KNOWN_PLACEHOLDER_SECRETS,
  ])('refuses the placeholder %s, however long, naming the variable', (placeholder) => {
    expect(problemsOf({ INTERNAL_TOKEN: placeholder.padEnd(32, '-') })).toMatch(/INTERNAL_TOKEN: is a placeholder or a value published in the Billstream repository/);
  });

  it('refuses placeholders written in other words or cases', () => {
    for (const value of ['CHANGE-ME-please-this-is-thirty-two-chars', 'my-secret-token-replace-me-0123456789', 'example-example-example-example-00']) {
      expect(isPlaceholderSecret(value)).toBe(true);
      expect(problemsOf({ INTERNAL_TOKEN: value })).toMatch(/INTERNAL_TOKEN: is a placeholder/);
    }
    expect(isPlaceholderSecret(' Compose-Internal-Token-Change-Me ')).toBe(true);
  });

  it('accepts 32 or more random characters', () => {
    for (const token of [randomBytes(16).toString('hex'), randomBytes(24).toString('base64url'), randomBytes(48).toString('base64')]) {
      expect(token.length).toBeGreaterThanOrEqual(32);
      expect(isPlaceholderSecret(token)).toBe(false);
      expect(loadConfig(schema, { ...base, INTERNAL_TOKEN: token }).INTERNAL_TOKEN).toBe(token);
    }
  });

  it('secretEnv applies the same rules to other secrets (the bootstrap API key)', () => {
    const keySchema = z.object({ BOOTSTRAP_API_KEY: secretEnv(20).optional() });
    expect(() => loadConfig(keySchema, { BOOTSTRAP_API_KEY: 'bsk_compose_local_development_key' })).toThrow(/BOOTSTRAP_API_KEY: is a placeholder/);
    expect(() => loadConfig(keySchema, { BOOTSTRAP_API_KEY: 'bsk_short' })).toThrow(/BOOTSTRAP_API_KEY: must be at least 20 characters/);
    const key = `bsk_${randomBytes(24).toString('base64url')}`;
    expect(loadConfig(keySchema, { BOOTSTRAP_API_KEY: key })).toEqual({ BOOTSTRAP_API_KEY: key });
    expect(loadConfig(keySchema, {})).toEqual({});
  });
});
