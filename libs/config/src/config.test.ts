import { z } from 'zod';
import { ConfigError, commonServiceEnv, env, loadConfig } from './index';

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
});
