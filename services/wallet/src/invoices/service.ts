import type { EventContext } from '@billstream/outbox';
import { allocateInvoice, allocateInvoices, type InvoiceToAllocate } from './allocate';
import type { InvoiceDeps } from './deps';
import type { Allocation, AllocationRequest, PaymentRequest, PaymentResult, Refund } from './domain';
import { payInvoice } from './pay';
import { refundInvoice } from './refund';

/** Wallet credits on invoices, for the billing service (internal routes; ADR 0016). */
export class InvoiceCreditService {
  constructor(private readonly deps: InvoiceDeps) {}

  allocate(ctx: EventContext, invoiceId: string, request: AllocationRequest, dryRun = false): Promise<Allocation> {
    return allocateInvoice(this.deps, ctx, invoiceId, request, dryRun);
  }

  /** Many invoices in one wallet transaction, each as `allocate` would; the answers follow `items`. */
  allocateMany(ctx: EventContext, items: InvoiceToAllocate[]): Promise<Allocation[]> {
    return allocateInvoices(this.deps, ctx, items);
  }

  pay(ctx: EventContext, invoiceId: string, request: PaymentRequest): Promise<PaymentResult> {
    return payInvoice(this.deps, ctx, invoiceId, request);
  }

  refund(ctx: EventContext, invoiceId: string): Promise<Refund[]> {
    return refundInvoice(this.deps, ctx, invoiceId);
  }
}
