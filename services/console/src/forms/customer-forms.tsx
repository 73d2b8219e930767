import { CREDIT_REASONS, customerApi, walletApi } from '@billstream/contracts';
import type { Api } from '../api';
import type { Customer, Wallet } from '../types';
import { ActionForm, filled } from './kit';

/** `POST /v1/customers` (customers page). */
export function CreateCustomerForm({ api, onDone, onCancel }: { api: Api; onDone: (customer: Customer) => void; onCancel: () => void }) {
  return (
    <ActionForm<Customer>
      api={api}
      title="New customer"
      route={customerApi.create}
      fields={[
        { name: 'external_customer_id', label: 'External id', hint: 'The id your systems know it by; unique in this environment.', placeholder: 'acme-42' },
        { name: 'name', label: 'Name' },
        { name: 'email', label: 'Email', kind: 'email' },
        { name: 'parent_customer_id', label: 'Parent customer id', hint: 'Optional: the customer that pays for this one.' },
      ]}
      submitLabel="Create customer"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}

/** `POST /v1/wallets/{id}/topup` (a customer's wallet row). */
export function TopUpForm({ api, wallet, onDone, onCancel }: { api: Api; wallet: Wallet; onDone: () => void; onCancel: () => void }) {
  return (
    <ActionForm
      api={api}
      title={`Top up wallet ${wallet.id}`}
      route={walletApi.topup}
      params={{ id: wallet.id }}
      fields={[
        { name: 'credits_to_add', label: 'Credits to add', hint: `Credits, e.g. 25 or 12.5 (the wallet counts ${wallet.currency.toUpperCase()}).` },
        { name: 'transaction_reason', label: 'Reason', kind: 'select', options: CREDIT_REASONS },
        { name: 'description', label: 'Description' },
      ]}
      initial={{ transaction_reason: 'PURCHASED_CREDIT_DIRECT' }}
      body={filled}
      submitLabel="Add credits"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}
