import { createDb, type Db } from '@billstream/db';
import type { ApiResponse } from '@billstream/testing';
import { assertLedgerAddsUp } from '@billstream/wallet';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/** The stack, a connection to the wallet's schema, and helpers of the reservation tests. */
export interface ReservationWorld {
  stack: IntegrationStack;
  walletDb: Db;
  customer(): Promise<{ id: string; external: string }>;
  /** A PRE_PAID wallet (USD unless told) of a new customer, with `credits` loaded. */
  wallet(credits: string, body?: Record<string, unknown>): Promise<{ id: string; customerId: string }>;
  reserve(body: Record<string, unknown>): Promise<ApiResponse>;
  /** Every wallet touched so far adds up (after every test). */
  assertLedgers(): Promise<void>;
  stop(): Promise<void>;
}

export async function startReservationWorld(prefix: string, env: Record<string, string> = {}): Promise<ReservationWorld> {
  const stack = await startIntegrationStack({ extra: { env: { WALLET_EXPIRY_INTERVAL_MS: '0', ...env } } });
  const walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
  let seq = 0;
  const touched = new Set<string>();
  const customer = async () => {
    const external = `${prefix}-${(seq += 1)}-${Date.now()}`;
    const res = await stack.api.post('/v1/customers', { external_customer_id: external });
    if (res.status !== 201) throw new Error(`customer: ${res.status} ${res.text}`);
    return { id: res.body.id as string, external };
  };
  return {
    stack,
    walletDb,
    customer,
    async wallet(credits, body = {}) {
      const c = await customer();
      const res = await stack.api.post('/v1/wallets', { customer_id: c.id, currency: 'USD', initial_credits_to_load: credits, ...body });
      if (res.status !== 201) throw new Error(`wallet: ${res.status} ${res.text}`);
      touched.add(res.body.id);
      return { id: res.body.id as string, customerId: c.id };
    },
    reserve: (body) => stack.api.post('/v1/reservations', { currency: 'usd', idempotency_key: `k-${(seq += 1)}-${Math.random()}`, ...body }),
    async assertLedgers() {
      for (const id of touched) await assertLedgerAddsUp(walletDb, id, new Date());
    },
    async stop() {
      await walletDb.destroy();
      await stack.stop();
    },
  };
}
