import { walletCreditsInternalApi, walletInternalApi, walletUnbilledUsageApi, type InternalCreditBatch, type Scope, type UnbilledUsageBody } from '@billstream/contracts';
import { NotFoundError, ServiceUnavailableError, ValidationError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import type {
  Allocation,
  AllocationRequest,
  CustomerCreditBatchOutcome,
  CustomerCreditOutcome,
  CustomerCreditRequest,
  WalletCredits,
  WalletInfo,
  WalletPaymentRequest,
  WalletPaymentResult,
  Wallets,
} from './domain';

interface Envelope {
  error?: { message?: string; details?: Record<string, unknown> };
}

/**
 * The wallet service's internal invoice endpoints (not routed by the gateway) and its wallet
 * API, called with the internal headers. A 400 or 404 of the wallet is the client's error and
 * passes through with its message; anything else is a 503 to retry.
 */
export class HttpWallets implements Wallets, WalletCredits {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 10_000) {
    this.client = new InternalClient({ service: 'wallet', baseUrl, internalToken, actor: 'billing', timeoutMs });
  }

  private async post<T>(scope: Scope, path: string, requestId: string, body: unknown): Promise<T> {
    const { status, text } = await this.client.call(scope, 'POST', path, requestId, body);
    if (status === 200 || status === 201) return JSON.parse(text) as T;
    throw upstreamError(status, text, path);
  }

  allocate(scope: Scope, invoiceId: string, request: AllocationRequest, requestId: string): Promise<Allocation> {
    return this.post(scope, `/internal/v1/invoices/${encodeURIComponent(invoiceId)}/allocation`, requestId, request);
  }

  async allocateMany(scope: Scope, invoices: Array<{ invoiceId: string; request: AllocationRequest }>, requestId: string): Promise<Allocation[]> {
    const body = {
      invoices: invoices.map(({ invoiceId, request }) => ({
        invoice_id: invoiceId,
        customer_id: request.customer_id,
        currency: request.currency,
        exponent: request.exponent,
        lines: request.lines,
      })),
    };
    const { allocations } = await this.post<{ allocations: Allocation[] }>(scope, walletInternalApi.allocateInvoicesCredits.path, requestId, body);
    if (allocations.length !== invoices.length) throw new ServiceUnavailableError('The wallet service answered another number of allocations; retry later');
    return allocations;
  }

  pay(scope: Scope, invoiceId: string, request: WalletPaymentRequest, requestId: string): Promise<WalletPaymentResult> {
    return this.post(scope, `/internal/v1/invoices/${encodeURIComponent(invoiceId)}/payments`, requestId, request);
  }

  async refund(scope: Scope, invoiceId: string, requestId: string): Promise<void> {
    await this.post(scope, `/internal/v1/invoices/${encodeURIComponent(invoiceId)}/refund`, requestId, {});
  }

  async wallet(scope: Scope, walletId: string, requestId: string): Promise<WalletInfo | undefined> {
    const { status, text } = await this.client.call(scope, 'GET', `/v1/wallets/${encodeURIComponent(walletId)}`, requestId);
    if (status === 404) return undefined;
    if (status !== 200) throw upstreamError(status, text, 'wallet');
    return JSON.parse(text) as WalletInfo;
  }

  async settle(scope: Scope, walletId: string, transactionId: string, settled: 'COMPLETED' | 'FAILED', requestId: string): Promise<void> {
    // The wallet's internal route (ADR 0056): the same status again answers 200 (a repeat after a crash);
    // settled otherwise (a termination failed it) is 409, an error here: never taken as done.
    const path = `/internal/v1/wallets/${encodeURIComponent(walletId)}/transactions/${encodeURIComponent(transactionId)}/settle`;
    const { status, text } = await this.client.call(scope, 'POST', path, requestId, { status: settled });
    if (status === 200) return;
    throw upstreamError(status, text, path);
  }

  async isPendingInvoicedCredit(scope: Scope, walletId: string, transactionId: string, requestId: string): Promise<boolean> {
    // No route reads one transaction: the wallet's pending invoiced credits are few, paged through here.
    const page = 1000;
    for (let offset = 0; ; offset += page) {
      const path = `/v1/wallets/${encodeURIComponent(walletId)}/transactions?transaction_status=PENDING&transaction_reason=PURCHASED_CREDIT_INVOICED&limit=${page}&offset=${offset}`;
      const { status, text } = await this.client.call(scope, 'GET', path, requestId);
      if (status === 404) return false;
      if (status !== 200) throw upstreamError(status, text, 'wallet transactions');
      const { items } = JSON.parse(text) as { items: Array<{ id: string }> };
      if (items.some((t) => t.id === transactionId)) return true;
      if (items.length < page) return false;
    }
  }

  async reportUnbilled(scope: Scope, body: UnbilledUsageBody, requestId: string): Promise<void> {
    await this.post(scope, walletUnbilledUsageApi.recordUnbilledUsage.path, requestId, body);
  }

  /**
   * A credit by idempotency key. A 400 naming `expiry_date` or a 404 (the customer) is final:
   * the wallet holds no credit under the key (it answers a stored key before either check).
   * Anything else is thrown: a frozen wallet (400 `wallet_status`), a 409, a 5xx, no answer.
   */
  async credit(scope: Scope, request: CustomerCreditRequest, requestId: string): Promise<CustomerCreditOutcome> {
    const path = walletCreditsInternalApi.creditCustomer.path;
    const { status, text } = await this.client.call(scope, 'POST', path, requestId, request);
    if (status === 201 || status === 200) {
      const body = JSON.parse(text) as { wallet_id: string; wallet_created: boolean; transaction: { id: string } };
      return { kind: 'credited', walletId: body.wallet_id, walletCreated: body.wallet_created, transactionId: body.transaction.id };
    }
    const error = upstreamError(status, text, path);
    const details = (error as { details?: Record<string, unknown> }).details;
    if (status === 400 && details?.field === 'expiry_date') return { kind: 'refused', reason: 'expired', message: error.message };
    if (status === 404 && details?.field === 'customer_id') return { kind: 'refused', reason: 'customer_deleted', message: error.message };
    throw error;
  }

  async creditMany(scope: Scope, requests: CustomerCreditRequest[], requestId: string): Promise<CustomerCreditBatchOutcome[]> {
    const { results } = await this.post<InternalCreditBatch>(scope, walletCreditsInternalApi.creditCustomers.path, requestId, { credits: requests });
    if (results.length !== requests.length) throw new ServiceUnavailableError('The wallet service answered another number of credits; retry later');
    return results.map((r): CustomerCreditBatchOutcome => {
      if (r.status === 'credited') return { kind: 'credited', walletId: r.wallet_id, walletCreated: r.wallet_created, transactionId: r.transaction.id };
      if (r.reason === 'wallet_not_active') return { kind: 'retry', message: r.message };
      return { kind: 'refused', reason: r.reason, message: r.message };
    });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

function upstreamError(status: number, text: string, what: string): Error {
  let body: Envelope = {};
  try {
    body = JSON.parse(text) as Envelope;
  } catch {
    /* not JSON: a proxy or a crash page */
  }
  const message = body.error?.message ?? `The wallet service answered ${status}`;
  if (status === 400 || status === 409) return new ValidationError(message, body.error?.details);
  if (status === 404) return new NotFoundError(message, body.error?.details);
  return new ServiceUnavailableError('The wallet service could not do it now; retry later', { upstream_status: status, call: what });
}
