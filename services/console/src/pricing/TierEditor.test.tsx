import { describe, expect, it } from '@jest/globals';
import { fireEvent, render, screen } from '@testing-library/react';
import { sumAmounts, usageLines, type UsageCharge } from '@billstream/pricing';
import { money } from '../format';
import { TierEditor } from './TierEditor';
import type { Price } from './types';

const price: Price = {
  id: 'price_1',
  plan_id: 'plan_1',
  type: 'USAGE',
  currency: 'usd',
  amount: null,
  billing_model: 'TIERED',
  billing_period: 'MONTHLY',
  billing_period_count: 1,
  invoice_cadence: 'ARREAR',
  meter_id: 'meter_1',
  package: null,
  tier_mode: 'SLAB',
  tiers: [
    { up_to: '100', unit_amount: '0.10', flat_amount: null },
    { up_to: '1000', unit_amount: '0.05', flat_amount: '2' },
    { up_to: null, unit_amount: '0.01', flat_amount: '10' },
  ],
  display_name: 'API calls',
  status: 'active',
  created_at: '2026-01-01T00:00:00Z',
};

const charge = (tiers: Array<[string | null, string, string | null]>, tierMode: 'SLAB' | 'VOLUME'): UsageCharge => ({
  billingModel: 'TIERED',
  tierMode,
  currency: 'usd',
  displayName: 'API calls',
  tiers: tiers.map(([upTo, unitAmount, flatAmount]) => ({ upTo, unitAmount, flatAmount })),
});
const billed = (c: UsageCharge, q: string) => money(sumAmounts(usageLines(c, q)), 'usd');
const total = () => screen.getByTestId('preview-total').textContent;

describe('TierEditor', () => {
  it("previews the calculator's amount for the quantity typed, as billing would bill it", () => {
    render(<TierEditor price={price} />);
    const original = charge([['100', '0.10', null], ['1000', '0.05', '2'], [null, '0.01', '10']], 'SLAB');
    for (const q of ['0', '1', '100', '101', '2500.5', '1234567']) {
      fireEvent.change(screen.getByLabelText('Quantity'), { target: { value: q } });
      expect(total()).toBe(`Total for ${q}: ${billed(original, q)}`);
    }
    // 100 x 0.10 + (900 x 0.05 + 2) + (1500.5 x 0.01 + 10) = 10 + 47 + 25.005 (rounded once a line, half up)
    fireEvent.change(screen.getByLabelText('Quantity'), { target: { value: '2500.5' } });
    expect(total()).toBe('Total for 2500.5: $82.01');
    expect(screen.getAllByRole('row').filter((r) => r.textContent?.startsWith('API calls (tier')).length).toBe(3);
  });

  it('follows the edits of tiers and mode, locally, with the same calculator', () => {
    render(<TierEditor price={price} />);
    fireEvent.change(screen.getByLabelText('Quantity'), { target: { value: '750' } });
    fireEvent.change(screen.getByLabelText('Tier 2 unit amount'), { target: { value: '0.04' } });
    fireEvent.change(screen.getByLabelText('Tier mode'), { target: { value: 'VOLUME' } });
    expect(total()).toBe(`Total for 750: ${billed(charge([['100', '0.10', null], ['1000', '0.04', '2'], [null, '0.01', '10']], 'VOLUME'), '750')}`);
    expect(total()).toBe('Total for 750: $32.00');
    fireEvent.click(screen.getByRole('button', { name: 'Remove tier 1' }));
    expect(total()).toBe(`Total for 750: ${billed(charge([['1000', '0.04', '2'], [null, '0.01', '10']], 'VOLUME'), '750')}`);
  });

  it('says what is wrong instead of a total when a tier or the quantity is not valid', () => {
    render(<TierEditor price={price} />);
    fireEvent.change(screen.getByLabelText('Tier 2 up to'), { target: { value: '50' } });
    expect(screen.getByRole('alert').textContent).toBe('Tier 2: "up to" must be above the tier before');
    fireEvent.change(screen.getByLabelText('Tier 2 up to'), { target: { value: '1000' } });
    fireEvent.change(screen.getByLabelText('Quantity'), { target: { value: '-3' } });
    expect(screen.getByRole('alert').textContent).toBe('usage quantity "-3" must be a decimal string of 0 or more');
    expect(screen.queryByTestId('preview-total')).toBeNull();
  });

  it('previews a package price with its rounding', () => {
    render(<TierEditor price={{ ...price, billing_model: 'PACKAGE', amount: '5', package: { size: '100', round: 'UP' }, tier_mode: null, tiers: null }} />);
    fireEvent.change(screen.getByLabelText('Quantity'), { target: { value: '250' } });
    expect(total()).toBe('Total for 250: $15.00');
    fireEvent.change(screen.getByLabelText('Rounding'), { target: { value: 'DOWN' } });
    expect(total()).toBe('Total for 250: $10.00');
  });
});
