import { messageIdOf } from './recorder';
import { MAX_RETRY_DELAY_MS, retryDelayMs } from './sender';

describe('invoice email retries and Message-ID (ADR 0067)', () => {
  it('waits the base, then doubles, at most 6 hours', () => {
    expect([1, 2, 3, 4, 9].map((n) => retryDelayMs(n, 60_000))).toEqual([60_000, 120_000, 240_000, 480_000, 15_360_000]);
    expect(retryDelayMs(10, 60_000)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(30, 60_000)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('derives the Message-ID from the communication id at the sender domain', () => {
    expect(messageIdOf('icomm_01ABC', 'billing@acme.example')).toBe('<icomm_01ABC@acme.example>');
  });
});
