/** What the portal API answers (docs/api/portal.md), as the pages read it. */
export interface PortalSession {
  session: { id: string; expires_at: string; return_url: string | null };
  customer: { id: string; name: string | null; email: string | null; external_id: string };
  customers: Array<{ id: string; name: string | null; external_id: string }>;
  branding: { company_name: string | null; logo_url: string | null; accent_color: string | null };
}

export interface PortalInvoice {
  id: string;
  invoice_number: string | null;
  customer_id: string;
  status: string;
  currency: string;
  total: number;
  amount_due: number;
  due_date: string | null;
  period_start: string | null;
  period_end: string | null;
  hosted_invoice_url: string | null;
  invoice_pdf_url: string | null;
}

export interface PortalCreditNote {
  id: string;
  credit_note_number?: string | null;
  invoice_id: string;
  status: string;
  currency: string;
  total?: number;
  created_at: string;
}

export interface PortalSubscription {
  id: string;
  customer_id: string;
  status: string;
  plan_name: string | null;
  current_period_start?: string | null;
  current_period_end?: string | null;
  upcoming_invoice: { currency: string; total: number; amount_due: number; period_end?: string | null } | null;
}

export interface UsageItem {
  price_id: string;
  meter_id: string;
  display_name: string | null;
  meter_name: string | null;
  quantity: string;
  amount: number;
}

export interface PortalUsage {
  as_of: string;
  subscriptions: Array<{ subscription_id: string; customer_id: string; currency: string; amount: number; items: UsageItem[]; period_start: string; period_end: string }>;
  totals: Array<{ currency: string; amount: number }>;
}

export interface PortalWallet {
  id: string;
  customer_id: string;
  description: string | null;
  currency: string;
  wallet_status: string;
  balance: { balance: string; credit_balance: string; real_time_balance?: string; real_time_credit_balance?: string } | null;
}

export interface PortalTransaction {
  id: string;
  type: string;
  transaction_status?: string;
  transaction_reason?: string;
  amount?: string;
  credit_amount?: string;
  credit_balance_after?: string;
  created_at: string;
  description?: string | null;
}

export interface PortalEntitlement {
  customer_id: string;
  feature_lookup_key: string;
  type: string;
  is_enabled: boolean;
  usage_limit: string | null;
  usage: string | null;
  remaining: string | null;
  static_value: string | null;
}

export interface PortalHold {
  id: string;
  customer_id: string;
  wallet_id: string;
  currency: string;
  credits_held: string;
  expires_at: string;
  created_at: string;
}

export interface Page<T> {
  items: T[];
  pagination?: { total: number; limit: number; offset: number };
}
