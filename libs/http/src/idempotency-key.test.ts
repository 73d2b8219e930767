import { z } from 'zod';
import { billingApi, defineRoute, invoiceApi, walletApi } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { takesIdempotencyKey, withIdempotencyKey } from './idempotency-key';

const route = (body: z.ZodType) =>
  defineRoute({ operationId: 'x', method: 'post', path: '/v1/x', service: 'billing', permission: 'plans:write', summary: 'x', tag: 'x', body, status: 200 });

const keyed = route(z.strictObject({ amount: z.string(), idempotency_key: z.string().min(1).max(255).optional() }));

function refusal(run: () => unknown): ValidationError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('the Idempotency-Key header (ADR 0035)', () => {
  it('finds every route of the registry whose body takes idempotency_key, refined and piped bodies included', () => {
    expect(takesIdempotencyKey(walletApi.topup)).toBe(true);
    expect(takesIdempotencyKey(walletApi.debit)).toBe(true);
    expect(takesIdempotencyKey(invoiceApi.createPayment)).toBe(true);
    expect(takesIdempotencyKey(billingApi.createPlan)).toBe(false);
    expect(takesIdempotencyKey(billingApi.getPlan)).toBe(false);
    expect(takesIdempotencyKey(route(z.strictObject({ idempotency_key: z.string() }).transform((b) => b)))).toBe(true);
    expect(takesIdempotencyKey(route(z.strictObject({ idempotency_key: z.string() }).superRefine(() => undefined)))).toBe(true);
  });

  it('merges the header alone into the body, keeps the body alone, and takes both when equal', () => {
    expect(withIdempotencyKey(keyed, { amount: '1' }, { 'idempotency-key': 'k-1' })).toEqual({ amount: '1', idempotency_key: 'k-1' });
    expect(withIdempotencyKey(keyed, { amount: '1', idempotency_key: 'k-1' }, {})).toEqual({ amount: '1', idempotency_key: 'k-1' });
    expect(withIdempotencyKey(keyed, { amount: '1', idempotency_key: 'k-1' }, { 'idempotency-key': 'k-1' })).toEqual({ amount: '1', idempotency_key: 'k-1' });
  });

  it('does not change the request body it was given', () => {
    const body = { amount: '1' };
    withIdempotencyKey(keyed, body, { 'idempotency-key': 'k-1' });
    expect(body).toEqual({ amount: '1' });
  });

  it('refuses a header and a body key that differ with a 400 naming the header', () => {
    const err = refusal(() => withIdempotencyKey(keyed, { amount: '1', idempotency_key: 'k-1' }, { 'idempotency-key': 'k-2' }));
    expect(err.message).toMatch(/Idempotency-Key header and body field idempotency_key differ/);
    expect(err.details).toMatchObject({ field: 'Idempotency-Key', header: 'k-2', body: 'k-1' });
  });

  it("holds the header to the body field's own rules", () => {
    const long = refusal(() => withIdempotencyKey(keyed, {}, { 'idempotency-key': 'k'.repeat(256) }));
    expect(long.details).toMatchObject({ field: 'Idempotency-Key' });
    expect(long.message).toMatch(/^Idempotency-Key header is invalid/);
    expect(refusal(() => withIdempotencyKey(keyed, {}, { 'idempotency-key': '' })).details).toMatchObject({ field: 'Idempotency-Key' });
    expect(withIdempotencyKey(keyed, {}, { 'idempotency-key': 'k'.repeat(255) })).toEqual({ idempotency_key: 'k'.repeat(255) });
  });

  it('reads a UTF-8 header as the same key the body would carry, and refuses bytes that are not UTF-8', () => {
    // node hands header bytes over as latin1 characters.
    const utf8 = Buffer.from('clé-ü', 'utf8').toString('latin1');
    expect(withIdempotencyKey(keyed, { idempotency_key: 'clé-ü' }, { 'idempotency-key': utf8 })).toEqual({ idempotency_key: 'clé-ü' });
    expect(refusal(() => withIdempotencyKey(keyed, {}, { 'idempotency-key': '\xff\xfe' })).details).toMatchObject({ field: 'Idempotency-Key' });
  });

  it('ignores the header on routes whose body takes no key', () => {
    const plain = route(z.strictObject({ name: z.string() }));
    expect(withIdempotencyKey(plain, { name: 'n' }, { 'idempotency-key': 'k'.repeat(999) })).toEqual({ name: 'n' });
  });
});
