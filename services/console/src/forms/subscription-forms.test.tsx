import { describe, expect, it, jest } from '@jest/globals';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { Api } from '../api';
import type { Subscription } from '../types';
import { toMinor } from './amount';
import { ChangePlanForm } from './subscription-forms';

const subscription: Subscription = {
  id: 'sub_1',
  plan_id: 'plan_starter',
  customer_id: 'cus_1',
  invoicing_customer_id: null,
  status: 'active',
  currency: 'usd',
  current_period_start: '2026-11-01T00:00:00Z',
  current_period_end: '2026-12-01T00:00:00Z',
};

describe('ChangePlanForm', () => {
  it('previews without a key, then changes with the form’s key; the page hears of the change only', async () => {
    const plans = { items: [{ id: 'plan_starter', name: 'Starter', status: 'active' }, { id: 'plan_pro', name: 'Pro', status: 'active' }], pagination: { total: 2, limit: 100, offset: 0 } };
    const preview = {
      subscription: { plan_id: 'plan_pro', current_period_start: null, current_period_end: null, effective_at: '2026-11-15T00:00:00Z' },
      invoice: { currency: 'usd', total: 1000, amount_due: 1000, line_items: [{ description: 'Fixed charge (prorated)', amount: 1500 }] },
    };
    const post = jest.fn((path: string) => Promise.resolve(path.endsWith('/preview') ? preview : { subscription: {}, invoice: null }));
    const api: Api = { get: (() => Promise.resolve(plans)) as Api['get'], post: post as Api['post'], put: () => Promise.reject(new Error('no puts here')), delete: () => Promise.reject(new Error('no deletes here')) };
    const onDone = jest.fn();
    render(<ChangePlanForm api={api} subscription={subscription} onDone={onDone} onCancel={() => undefined} />);
    const select = (await screen.findByLabelText('New plan')) as HTMLSelectElement;
    // The current plan is not offered.
    expect(Array.from(select.options, (o) => o.value)).toEqual(['', 'plan_pro']);
    fireEvent.click(screen.getByRole('button', { name: 'Preview the change' }));
    await waitFor(() => expect(screen.getByText('is required')).toBeTruthy());
    expect(post).not.toHaveBeenCalled();
    fireEvent.change(select, { target: { value: 'plan_pro' } });
    fireEvent.click(screen.getByRole('button', { name: 'Preview the change' }));
    await screen.findByRole('region', { name: 'Preview of the change' });
    expect(screen.getByText('Total $10.00, due $10.00')).toBeTruthy();
    expect(onDone).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Confirm the change' }));
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    const body = { plan_id: 'plan_pro', effective: 'immediately', proration_behavior: 'create_prorations' };
    expect(post.mock.calls).toEqual([
      ['/v1/subscriptions/sub_1/change/preview', body, undefined],
      ['/v1/subscriptions/sub_1/change', body, expect.stringMatching(/^console-[0-9a-f]{32}$/)],
    ]);
  });
});

describe('toMinor', () => {
  it("turns an amount typed in the currency's units into minor units, and leaves the rest to the schema", () => {
    expect([toMinor('12.50', 'usd'), toMinor('12.5', 'USD'), toMinor('7', 'usd'), toMinor('500', 'jpy'), toMinor('1.234', 'kwd')]).toEqual([1250, 1250, 700, 500, 1234]);
    expect([toMinor('1.234', 'usd'), toMinor('-3', 'usd'), toMinor('abc', 'usd'), toMinor(' ', 'usd')]).toEqual(['1.234', '-3', 'abc', undefined]);
  });
});
