import { z } from 'zod';
import { expectEveryVariableHonoured } from '@billstream/testing';
import { ingestionEnv, ingestionSettingsFrom } from './config';

describe('ingestion-aggregator settings', () => {
  it('honour every variable of the schema, in its own process and the embedded default alike (one mapping)', () => {
    expect(ingestionSettingsFrom({})).toEqual({ storeParallelism: 2 });
    expectEveryVariableHonoured(z.object(ingestionEnv), ingestionSettingsFrom, { INGESTION_STORE_PARALLELISM: '4' });
  });

  it('refuse a parallelism below 1, naming the variable', () => {
    expect(() => ingestionSettingsFrom({ INGESTION_STORE_PARALLELISM: '0' })).toThrow(/INGESTION_STORE_PARALLELISM/);
  });
});
