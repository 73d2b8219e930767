import { isIdempotentPost, withIdempotency } from './idempotency';

const key = () => 'generated';

describe('withIdempotency', () => {
  it('gives every top-up, debit and payment an idempotency key unless one is given', () => {
    expect(withIdempotency('POST', '/v1/wallets/wallet_1/topup', { credits_to_add: '5' }, key)).toEqual({ credits_to_add: '5', idempotency_key: 'generated' });
    expect(withIdempotency('POST', '/v1/wallets/wallet_1/debit', { credits: '1' }, key)).toEqual({ credits: '1', idempotency_key: 'generated' });
    expect(withIdempotency('POST', '/v1/payments', { invoice_id: 'inv_1' }, key)).toEqual({ invoice_id: 'inv_1', idempotency_key: 'generated' });
    const given = { credits: '1', idempotency_key: 'mine' };
    expect(withIdempotency('POST', '/v1/wallets/wallet_1/debit', given, key)).toBe(given);
  });

  it('puts the key of an Idempotency-Key header in the body instead of a new one (ADR 0035: equal keys are one key)', () => {
    expect(withIdempotency('POST', '/v1/wallets/wallet_1/topup', { credits_to_add: '5' }, key, 'from-header')).toEqual({ credits_to_add: '5', idempotency_key: 'from-header' });
    const given = { credits: '1', idempotency_key: 'mine' };
    expect(withIdempotency('POST', '/v1/wallets/wallet_1/debit', given, key, 'from-header')).toBe(given);
    const customer = { external_customer_id: 'c' };
    expect(withIdempotency('POST', '/v1/customers', customer, key, 'from-header')).toBe(customer);
  });

  it('gives every usage event an event_id unless it has one, and leaves other calls alone', () => {
    expect(withIdempotency('POST', '/v1/events', { event_name: 'x' }, key)).toEqual({ event_name: 'x', event_id: 'generated' });
    expect(withIdempotency('POST', '/v1/events/bulk', { events: [{ event_id: 'a' }, { event_name: 'b' }] }, key)).toEqual({
      events: [{ event_id: 'a' }, { event_name: 'b', event_id: 'generated' }],
    });
    const customer = { external_customer_id: 'c' };
    expect(withIdempotency('POST', '/v1/customers', customer, key)).toBe(customer);
    expect(withIdempotency('GET', '/v1/wallets/wallet_1/topup', undefined, key)).toBeUndefined();
  });

  it('keys every reservation, and takes its commit and release as safe to repeat without a key', () => {
    expect(withIdempotency('POST', '/v1/reservations', { credits: '1' }, key)).toEqual({ credits: '1', idempotency_key: 'generated' });
    expect(isIdempotentPost('POST', '/v1/reservations/{id}/commit')).toBe(true);
    expect(isIdempotentPost('post', '/v1/reservations/resv_1/release')).toBe(true);
    expect(isIdempotentPost('POST', '/v1/reservations')).toBe(false);
    expect(isIdempotentPost('GET', '/v1/reservations/resv_1/commit')).toBe(false);
  });
});
