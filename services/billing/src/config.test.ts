import { loadConfig } from '@billstream/config';
import { z } from 'zod';
import { expectEveryVariableHonoured } from '@billstream/testing';
import { billingEnv, billingSettings, billingSettingsEnv, billingSettingsFrom, durationMs } from './config';

describe('billing settings', () => {
  it('default to a 60 s period job, a 3-day renewal notice, no finalize delay and INV numbers', () => {
    expect(billingSettingsFrom({})).toEqual({ intervalMs: 60_000, leaseMs: 60_000, renewalNoticeDays: 3, finalizeDelayMs: 0, invoiceNumberPrefix: 'INV', creditNoteNumberPrefix: 'CN', concurrency: 8, tasksPollMs: 1000, tasksLeaseMs: 30_000, tasksBatchRows: 2000, unbilledDebounceMs: 250, unbilledSweepMs: 30_000, publicBaseUrl: 'http://127.0.0.1:8080', documentLinkTtlDays: 30, emailPollMs: 5000, emailMaxAttempts: 10, emailRetryBaseMs: 60_000, taxProvider: { timeoutMs: 5000, retryBaseMs: 60_000, retryMaxMs: 3_600_000 } });
  });

  it('parse the variables', () => {
    expect(
      billingSettingsFrom({
        BILLING_INTERVAL_MS: '0',
        SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '7',
        BILLING_FINALIZE_DELAY: '15m',
        INVOICE_NUMBER_PREFIX: 'ACME',
        CREDIT_NOTE_NUMBER_PREFIX: 'ACN',
        BILLING_JOB_CONCURRENCY: '32',
        UNBILLED_DEBOUNCE_MS: '100',
        UNBILLED_SWEEP_MS: '0',
      }),
    ).toEqual({ intervalMs: 0, leaseMs: 60_000, renewalNoticeDays: 7, finalizeDelayMs: 900_000, invoiceNumberPrefix: 'ACME', creditNoteNumberPrefix: 'ACN', concurrency: 32, tasksPollMs: 1000, tasksLeaseMs: 30_000, tasksBatchRows: 2000, unbilledDebounceMs: 100, unbilledSweepMs: 0, publicBaseUrl: 'http://127.0.0.1:8080', documentLinkTtlDays: 30, emailPollMs: 5000, emailMaxAttempts: 10, emailRetryBaseMs: 60_000, taxProvider: { timeoutMs: 5000, retryBaseMs: 60_000, retryMaxMs: 3_600_000 } });
    expect(durationMs('0s')).toBe(0);
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('2h')).toBe(7_200_000);
    expect(durationMs('1d')).toBe(86_400_000);
    expect(durationMs('250')).toBe(250);
  });

  it('refuse a bad value, naming the variable', () => {
    expect(() => billingSettingsFrom({ BILLING_INTERVAL_MS: 'soon' })).toThrow(/BILLING_INTERVAL_MS/);
    expect(() => billingSettingsFrom({ SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '1.5' })).toThrow(/SUBSCRIPTION_RENEWAL_NOTICE_DAYS/);
    expect(() => billingSettingsFrom({ SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '400' })).toThrow(/SUBSCRIPTION_RENEWAL_NOTICE_DAYS/);
    expect(() => billingSettingsFrom({ BILLING_FINALIZE_DELAY: 'later' })).toThrow(/BILLING_FINALIZE_DELAY/);
    expect(() => billingSettingsFrom({ INVOICE_NUMBER_PREFIX: 'IN V' })).toThrow(/INVOICE_NUMBER_PREFIX/);
    expect(() => billingSettingsFrom({ BILLING_JOB_CONCURRENCY: '0' })).toThrow(/BILLING_JOB_CONCURRENCY/);
    expect(() => billingSettingsFrom({ TASKS_LEASE_MS: '10' })).toThrow(/TASKS_LEASE_MS/);
    expect(() => billingSettingsFrom({ TASKS_POLL_MS: '-1' })).toThrow(/TASKS_POLL_MS/);
    expect(() => billingSettingsFrom({ BILLING_EMAIL_MAX_ATTEMPTS: '0' })).toThrow(/BILLING_EMAIL_MAX_ATTEMPTS/);
    expect(() => billingSettingsFrom({ BILLING_EMAIL_RETRY_BASE_MS: 'soon' })).toThrow(/BILLING_EMAIL_RETRY_BASE_MS/);
    expect(() => billingSettingsFrom({ TAX_PROVIDER_TIMEOUT_MS: '0' })).toThrow(/TAX_PROVIDER_TIMEOUT_MS/);
  });

  it('need the addresses of the customer service, the ingestion-aggregator and the wallet service when run alone', () => {
    const schema = z.object(billingEnv);
    expect(() => loadConfig(schema, {})).toThrow(/CUSTOMER_SERVICE_URL[\s\S]*INGESTION_SERVICE_URL[\s\S]*WALLET_SERVICE_URL/);
    expect(() => loadConfig(schema, { CUSTOMER_SERVICE_URL: 'http://customer:8081', INGESTION_SERVICE_URL: 'not a url' })).toThrow(
      /INGESTION_SERVICE_URL: must be the base URL of the ingestion-aggregator/,
    );
  });

  it('honour every variable of the schema, in its own process and the embedded default alike (one mapping)', () => {
    expectEveryVariableHonoured(billingSettingsEnv, billingSettingsFrom, {
      BILLING_INTERVAL_MS: '0',
      BILLING_CLAIM_LEASE_MS: '5000',
      SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '7',
      BILLING_FINALIZE_DELAY: '15m',
      INVOICE_NUMBER_PREFIX: 'ACME',
      CREDIT_NOTE_NUMBER_PREFIX: 'ACN',
      BILLING_JOB_CONCURRENCY: '2',
      TASKS_POLL_MS: '0',
      TASKS_LEASE_MS: '5000',
      TASKS_BATCH_ROWS: '100',
      UNBILLED_DEBOUNCE_MS: '100',
      UNBILLED_SWEEP_MS: '0',
      PUBLIC_BASE_URL: 'https://billing.example.com',
      DOCUMENT_LINK_SECRET: 'a-document-link-secret-of-32-characters-at-least',
      DOCUMENT_LINK_TTL_DAYS_AFTER_DUE: '7',
      SMTP_URL: 'smtp://mailer:secret@mail.example.com:587',
      BILLING_EMAIL_POLL_MS: '0',
      BILLING_EMAIL_MAX_ATTEMPTS: '3',
      BILLING_EMAIL_RETRY_BASE_MS: '1000',
      TAX_PROVIDER_TIMEOUT_MS: '1000',
      TAX_PROVIDER_RETRY_BASE_MS: '200',
      TAX_PROVIDER_RETRY_MAX_MS: '5000',
    });
  });

  it('take SMTP_URL as an smtp:// or smtps:// URL, or none (ADR 0067)', () => {
    expect(billingSettingsFrom({}).smtpUrl).toBeUndefined();
    expect(billingSettingsFrom({ SMTP_URL: 'smtps://mail.example.com:465' }).smtpUrl).toBe('smtps://mail.example.com:465');
    for (const bad of ['http://mail.example.com', 'mail.example.com:25', 'smtp://']) expect(() => billingSettingsFrom({ SMTP_URL: bad })).toThrow(/SMTP_URL/);
  });

  it('take the public base URL of signed links without a trailing slash, and a link secret of 32+ characters or none', () => {
    expect(billingSettingsFrom({ PUBLIC_BASE_URL: 'https://billing.example.com/' }).publicBaseUrl).toBe('https://billing.example.com');
    expect(billingSettingsFrom({ DOCUMENT_LINK_SECRET: '' }).documentLinkSecret).toBeUndefined();
    expect(() => billingSettingsFrom({ DOCUMENT_LINK_SECRET: 'short' })).toThrow(/DOCUMENT_LINK_SECRET/);
    expect(() => billingSettingsFrom({ PUBLIC_BASE_URL: 'not a url' })).toThrow(/PUBLIC_BASE_URL/);
    expect(billingSettingsFrom({ DOCUMENT_LINK_TTL_DAYS_AFTER_DUE: '90' }).documentLinkTtlDays).toBe(90);
    for (const bad of ['0', '1.5', '3651', 'soon']) expect(() => billingSettingsFrom({ DOCUMENT_LINK_TTL_DAYS_AFTER_DUE: bad })).toThrow(/DOCUMENT_LINK_TTL_DAYS_AFTER_DUE/);
  });

  it('map the variables of a billing process as the embedded default does, UNBILLED_* included (main.ts uses billingSettings)', () => {
    const urls = { CUSTOMER_SERVICE_URL: 'http://customer:8081', INGESTION_SERVICE_URL: 'http://ingestion:8083', WALLET_SERVICE_URL: 'http://wallet:8082' };
    const vars = { UNBILLED_DEBOUNCE_MS: '100', UNBILLED_SWEEP_MS: '0', TASKS_BATCH_ROWS: '100' };
    const own = billingSettings(loadConfig(z.object(billingEnv), { ...urls, ...vars }));
    expect(own).toEqual(billingSettingsFrom(vars));
    expect(own).toMatchObject({ unbilledDebounceMs: 100, unbilledSweepMs: 0, tasksBatchRows: 100 });
  });
});
