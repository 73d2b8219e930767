import { z } from 'zod';
import { isKnownCurrency, money } from '@billstream/money';
import { TAX_BEHAVIORS, taxRateIdsSchema } from '../common';

/**
 * Edge validation of price requests (docs/api/billing.md#prices). They live in the contracts
 * with the ISO 4217 table they check against, so the gateway validates billing routes like
 * every other (ADR 0014).
 */
export const BILLING_PRICE_TYPES = ['FIXED', 'USAGE'] as const;
export const BILLING_MODELS = ['FLAT_FEE', 'PACKAGE', 'TIERED'] as const;
export const BILLING_PERIODS = ['DAILY', 'WEEKLY', 'MONTHLY', 'QUARTERLY', 'ANNUAL'] as const;
export const INVOICE_CADENCES = ['ADVANCE', 'ARREAR'] as const;
export const TIER_MODES = ['VOLUME', 'SLAB'] as const;
export const PACKAGE_ROUNDS = ['UP', 'DOWN'] as const;
export const MAX_DECIMALS = 12;

/** A price amount: major units, a decimal string of 0 or more, at most 12 decimals ("0.0001"). */
export const amountString = z
  .string()
  .regex(/^(0|[1-9]\d{0,27})(\.\d+)?$/, 'must be a decimal number of 0 or more written as a string, e.g. "0.0001"')
  .refine((v) => (v.split('.')[1]?.length ?? 0) <= MAX_DECIMALS, `has more than ${MAX_DECIMALS} decimals`);

/** A quantity of a price definition (a tier bound, a package size): like an amount, above 0. */
export const positiveQuantityString = amountString.refine((v) => /[1-9]/.test(v), 'must be greater than 0');

/** An ISO 4217 code of the table, any case in, lower case out. */
export const currencyCode = z
  .string()
  .refine(isKnownCurrency, 'must be a known ISO 4217 currency code, e.g. "usd"')
  .transform((v) => v.toLowerCase());

export const tierBody = z.strictObject({
  up_to: positiveQuantityString.nullable().default(null),
  unit_amount: amountString,
  flat_amount: amountString.optional(),
});

const priceFields = {
  type: z.enum(BILLING_PRICE_TYPES),
  currency: currencyCode,
  amount: amountString.optional(),
  billing_model: z.enum(BILLING_MODELS),
  billing_period: z.enum(BILLING_PERIODS),
  billing_period_count: z.number().int('must be a whole number').min(1, 'must be between 1 and 1000').max(1000, 'must be between 1 and 1000').default(1),
  invoice_cadence: z.enum(INVOICE_CADENCES),
  meter_id: z.string().min(1).max(255).optional(),
  filter_values: z.record(z.string().min(1).max(255), z.array(z.string().max(2000)).min(1, 'needs at least one value').max(100)).optional(),
  package: z.strictObject({ size: positiveQuantityString, round: z.enum(PACKAGE_ROUNDS) }).optional(),
  tier_mode: z.enum(TIER_MODES).optional(),
  tiers: z.array(tierBody).min(1, 'needs at least one tier').max(100, 'at most 100 tiers').optional(),
  display_name: z.string().min(1).max(255).optional(),
  /** Tax (docs/api/taxes.md#which-rates-a-line-bears): the rates its lines bear, before the plan's and the customer's. */
  tax_rate_ids: taxRateIdsSchema.optional(),
  /** Absent: the settings' `tax.default_behavior`. */
  tax_behavior: z.enum(TAX_BEHAVIORS, 'must be exclusive or inclusive').optional(),
};

type PriceFields = z.output<z.ZodObject<typeof priceFields>>;

/** The rules between fields; each issue names the field to fix. */
function checkPrice(price: PriceFields, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const forbid = (field: keyof PriceFields, why: string) => {
    if (price[field] !== undefined) issue([field], `is not allowed ${why}`);
  };
  if (price.type === 'USAGE') {
    if (price.meter_id === undefined) issue(['meter_id'], 'is required for a USAGE price');
    if (price.invoice_cadence === 'ADVANCE') issue(['invoice_cadence'], 'must be ARREAR for a USAGE price: usage is known only at the end of its period');
  } else {
    forbid('meter_id', 'on a FIXED price');
    forbid('filter_values', 'on a FIXED price');
    if (price.billing_model !== 'FLAT_FEE') issue(['billing_model'], 'must be FLAT_FEE for a FIXED price (one line of quantity 1 at the amount)');
  }
  if (price.billing_model === 'TIERED') {
    forbid('amount', 'with billing_model TIERED (the tiers carry the amounts)');
    forbid('package', 'with billing_model TIERED');
    if (price.tier_mode === undefined) issue(['tier_mode'], 'is required with billing_model TIERED');
    if (price.tiers === undefined) issue(['tiers'], 'are required with billing_model TIERED');
    else checkTiers(price.tiers, issue);
    return;
  }
  if (price.amount === undefined) issue(['amount'], `is required with billing_model ${price.billing_model}`);
  forbid('tier_mode', `with billing_model ${price.billing_model}`);
  forbid('tiers', `with billing_model ${price.billing_model}`);
  if (price.billing_model === 'PACKAGE' && price.package === undefined) issue(['package'], 'is required with billing_model PACKAGE');
  if (price.billing_model !== 'PACKAGE') forbid('package', `with billing_model ${price.billing_model}`);
}

/** Tier bounds rise strictly; only the last is open (up_to null), and it must be. */
export function checkTiers(tiers: NonNullable<PriceFields['tiers']>, issue: (path: (string | number)[], message: string) => void): void {
  const last = tiers.length - 1;
  tiers.forEach((tier, i) => {
    if (i === last) {
      if (tier.up_to !== null) issue(['tiers', i, 'up_to'], 'must be null on the last tier');
      return;
    }
    if (tier.up_to === null) return issue(['tiers', i, 'up_to'], 'is required on every tier but the last');
    const previous = i === 0 ? null : tiers[i - 1].up_to;
    if (previous !== null && money(tier.up_to).lte(previous)) issue(['tiers', i, 'up_to'], `must be greater than the previous tier's up_to (${previous})`);
  });
}

/** A price inside `POST /v1/plans {prices}`: no plan_id. */
export const planPriceBody = z.strictObject(priceFields).superRefine(checkPrice);

/** `POST /v1/prices`. */
export const createPriceBody = z
  .strictObject({ plan_id: z.string().min(1).max(255), ...priceFields })
  .superRefine(checkPrice)
  .meta({
    examples: [
      {
        plan_id: 'plan_01JDQ8Z6Y4K2M9N3P5R7T9V1X3',
        type: 'USAGE',
        currency: 'usd',
        billing_model: 'TIERED',
        tier_mode: 'SLAB',
        tiers: [
          { up_to: '1000', unit_amount: '0.002' },
          { up_to: null, unit_amount: '0.001', flat_amount: '5' },
        ],
        billing_period: 'MONTHLY',
        invoice_cadence: 'ARREAR',
        meter_id: 'meter_01JDQ8Z6Y4K2M9N3P5R7T9V1X3',
        filter_values: { region: ['eu-west-1'] },
        display_name: 'API requests',
      },
    ],
  });

export type CreatePriceBody = z.output<typeof createPriceBody>;
export type PlanPriceBody = z.output<typeof planPriceBody>;
