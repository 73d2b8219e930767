/** A customer's unbilled usage in one currency (ADR 0024), in minor units. */
export interface UnbilledUsage {
  customerId: string;
  currency: string;
  /** The whole: the current periods' usage lines plus `invoices`. */
  amount: number;
  /** Usage lines of draft invoices not allocated yet: invoice id -> minor units. */
  invoices: Record<string, number>;
  asOf: Date;
}

/** What the billing service computed for a batch of customers at `asOf`. */
export interface UnbilledReport {
  asOf: Date;
  customers: Array<{
    customerId: string;
    amounts: Array<{ currency: string; amount: number; invoices: Array<{ invoiceId: string; amount: number }> }>;
  }>;
}

export const unbilledKey = (p: { customerId: string; currency: string }): string => `${p.customerId}\u0000${p.currency}`;
