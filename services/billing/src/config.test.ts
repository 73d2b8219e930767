import { loadConfig } from '@billstream/config';
import { z } from 'zod';
import { billingEnv, billingSettingsFrom } from './config';

describe('billing settings', () => {
  it('default to a 60 s period job and a 3-day renewal notice', () => {
    expect(billingSettingsFrom({})).toEqual({ intervalMs: 60_000, renewalNoticeDays: 3 });
  });

  it('parse the variables', () => {
    expect(billingSettingsFrom({ BILLING_INTERVAL_MS: '0', SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '7' })).toEqual({ intervalMs: 0, renewalNoticeDays: 7 });
  });

  it('refuse a bad value, naming the variable', () => {
    expect(() => billingSettingsFrom({ BILLING_INTERVAL_MS: 'soon' })).toThrow(/BILLING_INTERVAL_MS/);
    expect(() => billingSettingsFrom({ SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '1.5' })).toThrow(/SUBSCRIPTION_RENEWAL_NOTICE_DAYS/);
    expect(() => billingSettingsFrom({ SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '400' })).toThrow(/SUBSCRIPTION_RENEWAL_NOTICE_DAYS/);
  });

  it('need the addresses of the customer service and the ingestion-aggregator when run alone', () => {
    const schema = z.object(billingEnv);
    expect(() => loadConfig(schema, {})).toThrow(/CUSTOMER_SERVICE_URL[\s\S]*INGESTION_SERVICE_URL/);
    expect(() => loadConfig(schema, { CUSTOMER_SERVICE_URL: 'http://customer:8081', INGESTION_SERVICE_URL: 'not a url' })).toThrow(
      /INGESTION_SERVICE_URL: must be the base URL of the ingestion-aggregator/,
    );
  });
});
