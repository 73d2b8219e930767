import { describe, expect, it, jest } from '@jest/globals';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { customerApi, invoiceApi, walletApi } from '@billstream/contracts';
import { ApiError, type Api } from '../api';
import { takesIdempotencyKey } from './issues';
import { ActionForm } from './kit';

type Post = (path: string, body: unknown, idempotencyKey?: string) => Promise<unknown>;

function fakeApi(post: Post) {
  const mock = jest.fn(post);
  const api: Api = { get: () => Promise.reject(new Error('no reads here')), post: mock as Api['post'], put: () => Promise.reject(new Error('no puts here')), delete: () => Promise.reject(new Error('no deletes here')) };
  return { api, post: mock };
}

/** The message shown for an input: the text of the elements its aria-describedby names. */
function describedText(input: HTMLElement): string {
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' | ');
}

function CustomerForm({ api, onDone = () => undefined }: { api: Api; onDone?: (v: unknown) => void }) {
  return (
    <ActionForm
      api={api}
      title="New customer"
      route={customerApi.create}
      fields={[
        { name: 'external_customer_id', label: 'External id' },
        { name: 'email', label: 'Email', kind: 'email' },
      ]}
      submitLabel="Create customer"
      onDone={onDone}
    />
  );
}

const submit = (name: string) => fireEvent.click(screen.getByRole('button', { name }));

describe('ActionForm', () => {
  it("shows the route schema's issues next to their fields and sends nothing", async () => {
    const { api, post } = fakeApi(() => Promise.resolve({}));
    render(<CustomerForm api={api} />);
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'not-an-email' } });
    submit('Create customer');
    await waitFor(() => expect(describedText(screen.getByLabelText('Email'))).toBe('must be a valid email address'));
    expect(describedText(screen.getByLabelText('External id'))).toBe('is required');
    expect(screen.getByLabelText('Email').getAttribute('aria-invalid')).toBe('true');
    expect(post).not.toHaveBeenCalled();
  });

  it("places the API's message next to the field its details.field names, else at the form's top", async () => {
    const answers = [
      new ApiError('A customer with external id acme-1 already exists', 409, 'external_customer_id', { field: 'external_customer_id' }),
      new ApiError('The gateway did not answer', 0, undefined, {}),
    ];
    const { api } = fakeApi(() => Promise.reject(answers.shift()));
    render(<CustomerForm api={api} />);
    fireEvent.change(screen.getByLabelText('External id'), { target: { value: 'acme-1' } });
    submit('Create customer');
    await waitFor(() => expect(describedText(screen.getByLabelText('External id'))).toBe('A customer with external id acme-1 already exists'));
    expect(screen.queryByRole('alert')).toBeNull();
    submit('Create customer');
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('The gateway did not answer'));
    expect(describedText(screen.getByLabelText('External id'))).toBe('');
  });

  it('sends one idempotency key across retries of a failing form, and a new one after a success', async () => {
    const answers: Array<() => Promise<unknown>> = [
      () => Promise.reject(new ApiError('The wallet service is unavailable', 503, undefined, {})),
      () => Promise.reject(new ApiError('The wallet service is unavailable', 503, undefined, {})),
      () => Promise.resolve({ id: 'wtx_1' }),
      () => Promise.resolve({ id: 'wtx_2' }),
    ];
    const { api, post } = fakeApi(() => answers.shift()!());
    const onDone = jest.fn();
    render(
      <ActionForm api={api} title="Top up" route={walletApi.topup} params={{ id: 'w/1' }} fields={[{ name: 'credits_to_add', label: 'Credits to add' }]} submitLabel="Add credits" onDone={onDone} />,
    );
    fireEvent.change(screen.getByLabelText('Credits to add'), { target: { value: '25' } });
    for (let i = 1; i <= 4; i++) {
      submit('Add credits');
      await waitFor(() => expect(post).toHaveBeenCalledTimes(i));
      await waitFor(() => expect((screen.getByRole('button', { name: 'Add credits' }) as HTMLButtonElement).disabled).toBe(false));
    }
    const keys = post.mock.calls.map((c) => c[2]);
    expect(post.mock.calls[0]!.slice(0, 2)).toEqual(['/v1/wallets/w%2F1/topup', { credits_to_add: '25' }]);
    expect(keys[0]).toMatch(/^console-[0-9a-f]{32}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toBe(keys[0]);
    expect(keys[3]).not.toBe(keys[0]);
    expect(onDone.mock.calls).toEqual([[{ id: 'wtx_1' }], [{ id: 'wtx_2' }]]);
  });

  it('sends no second request while one is in flight', async () => {
    let answer: (v: unknown) => void = () => undefined;
    const { api, post } = fakeApi(() => new Promise((resolve) => (answer = resolve)));
    const onDone = jest.fn();
    render(<CustomerForm api={api} onDone={onDone} />);
    fireEvent.change(screen.getByLabelText('External id'), { target: { value: 'acme-2' } });
    const form = screen.getByRole('form', { name: 'New customer' });
    // Two submits before React re-renders (a double click), then a click on the disabled button.
    fireEvent.submit(form);
    fireEvent.submit(form);
    await waitFor(() => expect((screen.getByRole('button', { name: 'Sending…' }) as HTMLButtonElement).disabled).toBe(true));
    fireEvent.submit(form);
    expect(post).toHaveBeenCalledTimes(1);
    await act(async () => answer({ id: 'cus_1' }));
    await waitFor(() => expect(onDone).toHaveBeenCalledWith({ id: 'cus_1' }));
    expect(post).toHaveBeenCalledTimes(1);
  });

  it("validates the body as the API sees it, with the Idempotency-Key header's key in it", async () => {
    expect([walletApi.topup, invoiceApi.createPayment, customerApi.create, invoiceApi.voidInvoice].map((r) => takesIdempotencyKey(r.body!))).toEqual([true, true, false, false]);
    const { api, post } = fakeApi(() => Promise.resolve({ id: 'pay_1' }));
    render(
      <ActionForm
        api={api}
        title="Record a payment"
        route={invoiceApi.createPayment}
        fields={[{ name: 'provider', label: 'Provider' }]}
        initial={{ provider: 'stripe' }}
        // A PROVIDER payment's schema requires idempotency_key: the header's key is it.
        body={(v) => ({ invoice_id: 'inv_1', amount: 1250, payment_method_type: 'PROVIDER', provider: v.provider })}
        submitLabel="Record payment"
        onDone={() => undefined}
      />,
    );
    submit('Record payment');
    await waitFor(() => expect(post).toHaveBeenCalledTimes(1));
    expect(post.mock.calls[0]![1]).toEqual({ invoice_id: 'inv_1', amount: 1250, payment_method_type: 'PROVIDER', provider: 'stripe' });
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
