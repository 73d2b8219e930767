import type { Db } from '@billstream/db';
import { RateLimitedError, UnauthenticatedError } from '@billstream/errors';
import { hashKey } from './api-keys/key';
import { ApiKeyService } from './api-keys/service';
import type { ApiKeyStore } from './api-keys/store';
import { callerOf, type CallerLimits } from './auth';
import { TokenBucketLimiter } from './rate-limit';

const VALID = 'bsk_valid_0123456789abcdef';

/** Keys of a store that knows VALID; `down` makes every lookup fail. */
function setup(burst: number) {
  const state = { lookups: 0, down: false };
  const store = {
    findByHash: async (_db: unknown, hash: string) => {
      state.lookups += 1;
      if (state.down) throw new Error('database down');
      return hash === hashKey(VALID)
        ? { id: 'key_1', tenantId: 't', environmentId: 'e', name: 'k', keyHash: hash, keyPrefix: 'bsk_', permissions: ['*'], createdBy: 'x', createdAt: new Date(0), revokedAt: null }
        : undefined;
    },
  } as unknown as ApiKeyStore;
  const apiKeys = new ApiKeyService(null as unknown as Db, store);
  const limits: CallerLimits = { tenants: new TokenBucketLimiter(1000, 1000, () => 0), failures: new TokenBucketLimiter(0.001, burst, () => 0) };
  const call = (key: string | undefined, address = '192.0.2.1') => callerOf(key, address, apiKeys, limits, 'req');
  return { state, call };
}

describe('callerOf and failed authentications per address', () => {
  it('counts missing and invalid keys, then refuses with 429 before any lookup; other addresses are unaffected', async () => {
    const { state, call } = setup(2);
    await expect(call(undefined)).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(call('bsk_bad_0123456789abcdef')).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(state.lookups).toBe(1);
    await expect(call('bsk_other_0123456789abcdef')).rejects.toMatchObject({ kind: 'rate_limited', message: expect.stringContaining('without a valid API key') });
    await expect(call(undefined)).rejects.toBeInstanceOf(RateLimitedError);
    expect(state.lookups).toBe(1);
    await expect(call('bsk_other_0123456789abcdef', '192.0.2.2')).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('a valid key costs the address nothing, and a failed lookup is no failure of the address', async () => {
    const { state, call } = setup(1);
    state.down = true;
    await expect(call(VALID)).rejects.toThrow('database down');
    await expect(call(VALID)).rejects.toThrow('database down');
    state.down = false;
    // Its lookup reserved the only token and gave it back: the address still has one failure left.
    await expect(call(VALID)).resolves.toMatchObject({ principal: { keyId: 'key_1' } });
    await expect(call('bsk_bad_0123456789abcdef')).rejects.toBeInstanceOf(UnauthenticatedError);
    // Limited now, a cached valid key still passes.
    await expect(call('bsk_bad2_0123456789abcdef')).rejects.toBeInstanceOf(RateLimitedError);
    await expect(call(VALID)).resolves.toMatchObject({ ctx: { tenantId: 't', environmentId: 'e', actor: 'key_1' } });
  });
});
