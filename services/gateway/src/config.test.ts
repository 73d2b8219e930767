import { randomBytes } from 'node:crypto';
import { expectEveryVariableHonoured } from '@billstream/testing';
import { gatewaySettingsEnv, gatewaySettingsFrom } from './config';

describe('gateway settings', () => {
  const key = () => `bsk_${randomBytes(24).toString('base64url')}`;

  it('honour every variable of the schema, in its own process and the embedded default alike (one mapping)', () => {
    expectEveryVariableHonoured(
      gatewaySettingsEnv,
      gatewaySettingsFrom,
      {
        RATE_LIMIT_RPS: '5',
        RATE_LIMIT_BURST: '7',
        API_KEY_CACHE_TTL_MS: '250',
        API_KEY_CACHE_MAX: '50',
        AUTH_FAILURE_RATE_LIMIT_RPS: '3',
        AUTH_FAILURE_RATE_LIMIT_BURST: '9',
        TRUSTED_PROXY_HOPS: '1',
        BOOTSTRAP_API_KEY: key(),
        BOOTSTRAP_TENANT_ID: 'acme',
        BOOTSTRAP_ENVIRONMENT_ID: 'sandbox',
        PUBLIC_BASE_URL: 'https://billing.example.com',
      },
      { BOOTSTRAP_API_KEY: key() },
    );
  });

  it('refuse a bootstrap key published in the repository (ADR 0034), naming the variable', () => {
    expect(() => gatewaySettingsFrom({ BOOTSTRAP_API_KEY: 'bsk_compose_local_development_key' })).toThrow(/BOOTSTRAP_API_KEY: is a placeholder/);
    expect(() => gatewaySettingsFrom({ BOOTSTRAP_API_KEY: 'bsk_replace_with_a_long_random_key_or_delete_this_secret' })).toThrow(/BOOTSTRAP_API_KEY/);
    const k = key();
    expect(gatewaySettingsFrom({ BOOTSTRAP_API_KEY: k }).bootstrap).toEqual({ key: k, tenantId: 'default', environmentId: 'production' });
  });

  it('portal settings: PUBLIC_BASE_URL without its trailing slash; frame ancestors are no gateway setting (each tenant sets its own, ADR 0069)', () => {
    expect(gatewaySettingsFrom({ PUBLIC_BASE_URL: 'https://billing.example.com/' }).publicBaseUrl).toBe('https://billing.example.com');
    expect(Object.keys(gatewaySettingsEnv.shape)).not.toContain('PORTAL_FRAME_ANCESTORS');
  });
});
