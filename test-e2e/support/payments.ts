import type { ApiClient } from '@billstream/testing';

/**
 * Finalizes the subscription's drafts and pays every invoice in full (OFFLINE) through the
 * gateway: a plan change then credits paid time as a proration credit (ADR 0056).
 */
export async function paidInFull(api: ApiClient, subscriptionId: string): Promise<void> {
  for (const i of (await api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`)).body.items as Array<{ id: string; status: string }>) {
    if (i.status === 'draft') expect((await api.post(`/v1/invoices/${i.id}/finalize`, {})).status).toBe(200);
    const left = (await api.get(`/v1/invoices/${i.id}`)).body.amount_remaining as number;
    if (left > 0) expect((await api.post('/v1/payments', { invoice_id: i.id, amount: left, payment_method_type: 'OFFLINE' })).status).toBe(201);
  }
}
