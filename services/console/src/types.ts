/** The parts of the API's answers the pages show (the full shapes are in docs/openapi.json). */
export interface Customer {
  id: string;
  external_id: string;
  name: string | null;
  email: string | null;
  parent_customer_id: string | null;
  status: string;
  created_at: string;
}

export interface Wallet {
  id: string;
  currency: string;
  wallet_type: string;
  wallet_status: string;
  balance: string;
  credit_balance: string;
}

export interface Balance {
  balance: string;
  credit_balance: string;
  real_time_balance?: string;
  unbilled_usage?: number;
  /** Credits of the wallet's live reservations, and what a new hold can take (docs/api/reservations.md). */
  credits_held?: string;
  credits_available?: string;
}

/** A hold of a PRE_PAID wallet (docs/api/reservations.md). */
export interface Reservation {
  id: string;
  status: 'held' | 'committed' | 'released' | 'expired';
  wallet_id: string;
  currency: string;
  credits_held: string;
  expires_at: string;
  metadata: Record<string, string>;
  created_at: string;
}

export interface Subscription {
  id: string;
  plan_id: string;
  customer_id: string;
  invoicing_customer_id: string | null;
  status: string;
  currency: string;
  current_period_start: string | null;
  current_period_end: string | null;
}

export interface InvoiceLine {
  id: string;
  description: string;
  line_type: string;
  quantity: string;
  unit_amount: string;
  amount: number;
  net_amount: number;
  prepaid_credits_applied: number;
  /** Tax (docs/api/taxes.md#invoices-bearing-tax): the rates a line bore; `tax_behavior` null when taxes were off. */
  tax_amount: number;
  taxes: Array<{ tax_rate_id: string; code: string; percentage: string; taxable_amount: number; amount: number }>;
  tax_behavior: 'exclusive' | 'inclusive' | null;
}

export interface TaxBreakdown {
  tax_rate_id: string;
  code: string;
  country: string | null;
  region: string | null;
  percentage: string;
  taxable_amount: number;
  amount: number;
}

/** A tax rate (`/v1/tax_rates`, docs/api/taxes.md#tax-rates-taxesread-taxeswrite). */
export interface TaxRate {
  id: string;
  code: string;
  name: string;
  percentage: string;
  tax_type: 'VAT' | 'GST' | 'SALES_TAX' | 'OTHER';
  country: string | null;
  region: string | null;
  description: string | null;
  active: boolean;
  created_at: string;
}

export interface Invoice {
  id: string;
  invoice_number: string | null;
  customer_id: string;
  subscription_id: string | null;
  billing_reason: string;
  status: string;
  payment_status: string;
  currency: string;
  period_start: string | null;
  period_end: string | null;
  subtotal: number;
  total_discount: number;
  total_prepaid_credits_applied: number;
  total: number;
  total_tax: number;
  total_excluding_tax: number;
  tax_breakdown: TaxBreakdown[];
  reverse_charge: boolean;
  tax_exempt_reason: 'customer_exempt' | null;
  buyer_tax: { tax_exempt: string; tax_ids: Array<{ type: string; value: string }>; address_country: string | null; address_state: string | null } | null;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  invoice_pdf_url: string | null;
  hosted_invoice_url: string | null;
  created_at: string;
  line_items: InvoiceLine[];
  /** What the invoice takes now, decided by billing (docs/api/billing.md#available-actions). */
  available_actions: Array<'finalize' | 'pay' | 'credit' | 'void'>;
}

export interface CreditNote {
  id: string;
  credit_note_number: string;
  customer_id: string;
  amount: number;
  /** The tax it returns, and what it gives back: amount plus the exclusive lines' tax. */
  tax_amount: number;
  total: number;
  currency: string;
  reason: string;
  status: string;
  created_at: string;
}

/** One invoice email (`GET /v1/invoices/{id}/communications`, ADR 0067). */
export interface InvoiceCommunication {
  id: string;
  trigger: 'finalization' | 'communication';
  status: 'pending' | 'sent' | 'failed';
  recipient: string | null;
  attempts: number;
  last_response: string | null;
  next_attempt_at: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface Discount {
  id: string;
  coupon_id: string;
  status: string;
  periods_remaining: number | null;
}

export interface Payment {
  id: string;
  invoice_id: string;
  amount: number;
  currency: string;
  payment_method_type: string;
  payment_status: string;
  reference: string | null;
  provider_reference: string | null;
  created_at: string;
}
