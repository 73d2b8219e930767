import { z } from 'zod';
import { expectEveryVariableHonoured } from '@billstream/testing';
import { webhookEnv, webhookSettingsFromEnv } from './config';

describe('webhook settings', () => {
  it('defaults to the documented schedule, a 10 s timeout and strict URLs', () => {
    const s = webhookSettingsFromEnv({});
    expect(s.retryScheduleMs).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000].map((x) => x * 1000));
    expect(s).toMatchObject({ timeoutMs: 10_000, allowInsecure: false, allowPrivate: false });
    expect(s.claimLeaseMs).toBeGreaterThan(s.timeoutMs);
  });

  it('parses the variables', () => {
    const s = webhookSettingsFromEnv({
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_SCHEDULE: '500ms, 2s,1m,1h,1d',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_CLAIM_LEASE_MS: '1000',
    });
    expect(s).toMatchObject({ allowInsecure: true, allowPrivate: true, timeoutMs: 2000, claimLeaseMs: 9000 });
    expect(s.retryScheduleMs).toEqual([500, 2000, 60_000, 3_600_000, 86_400_000]);
    expect(webhookSettingsFromEnv({ WEBHOOK_RETRY_SCHEDULE: 'none' }).retryScheduleMs).toEqual([]);
  });

  it('refuses a bad value, naming the variable', () => {
    expect(() => webhookSettingsFromEnv({ WEBHOOK_RETRY_SCHEDULE: '5s,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE: "soon" is not a duration/);
    expect(() => webhookSettingsFromEnv({ WEBHOOK_ALLOW_INSECURE: 'maybe' })).toThrow(/WEBHOOK_ALLOW_INSECURE/);
    expect(() => webhookSettingsFromEnv({ WEBHOOK_TIMEOUT_MS: '10' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });

  it('honour every variable of the schema, in its own process and the embedded default alike (one mapping)', () => {
    expectEveryVariableHonoured(z.object(webhookEnv), webhookSettingsFromEnv, {
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: 'none',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_CLAIM_LEASE_MS: '60000',
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_ENDPOINT_CONCURRENCY: '4',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_RETENTION_DAYS: '7',
    });
  });
});
