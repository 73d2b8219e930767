import { ConfigError } from '@billstream/config';
import { expectEveryVariableHonoured } from '@billstream/testing';
import { walletSettingsEnv, walletSettingsFrom } from './config';

describe('wallet settings', () => {
  it('reads WALLET_DEBIT_CONCURRENCY, defaulting to 1', () => {
    expect(walletSettingsFrom({})).toEqual({ expiryIntervalMs: 60_000, debitConcurrency: 2, debitOverlapMs: 5 });
    expect(walletSettingsFrom({ WALLET_DEBIT_CONCURRENCY: '3' }).debitConcurrency).toBe(3);
  });

  it('still reads the deprecated WALLET_DEBIT_TRANSACTIONS; the new name wins when both are set', () => {
    expect(walletSettingsFrom({ WALLET_DEBIT_TRANSACTIONS: '2' }).debitConcurrency).toBe(2);
    expect(walletSettingsFrom({ WALLET_DEBIT_TRANSACTIONS: '2', WALLET_DEBIT_CONCURRENCY: '4' }).debitConcurrency).toBe(4);
  });

  it('refuses a value below 1 under either name, naming the variable', () => {
    for (const name of ['WALLET_DEBIT_CONCURRENCY', 'WALLET_DEBIT_TRANSACTIONS']) {
      expect(() => walletSettingsFrom({ [name]: '0' })).toThrow(ConfigError);
      expect(() => walletSettingsFrom({ [name]: '0' })).toThrow(name);
    }
  });

  it('honour every variable of the schema, in its own process and the embedded default alike (one mapping)', () => {
    expectEveryVariableHonoured(walletSettingsEnv, walletSettingsFrom, {
      WALLET_EXPIRY_INTERVAL_MS: '0',
      WALLET_DEBIT_CONCURRENCY: '3',
      WALLET_DEBIT_TRANSACTIONS: '4',
      WALLET_DEBIT_OVERLAP_MS: '9',
    });
  });
});
