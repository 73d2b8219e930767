/** Plans and prices as the API answers them (docs/openapi.json, Plan and Price). */
export interface ApiTier {
  up_to: string | null;
  unit_amount: string;
  flat_amount: string | null;
}

export interface Price {
  id: string;
  plan_id: string;
  type: 'FIXED' | 'USAGE';
  currency: string;
  amount: string | null;
  billing_model: 'FLAT_FEE' | 'PACKAGE' | 'TIERED';
  billing_period: string;
  billing_period_count: number;
  invoice_cadence: string;
  meter_id: string | null;
  package: { size: string; round: 'UP' | 'DOWN' } | null;
  tier_mode: 'VOLUME' | 'SLAB' | null;
  tiers: ApiTier[] | null;
  display_name: string | null;
  status: string;
  created_at: string;
}

export interface Plan {
  id: string;
  name: string;
  lookup_key: string | null;
  description: string | null;
  status: string;
  prices: Price[];
  created_at: string;
}
