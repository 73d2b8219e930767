import { CREDIT_NOTE_REASONS, CREDIT_NOTE_REFUNDS, creditNoteApi, invoiceApi, PAYMENT_METHOD_TYPES } from '@billstream/contracts';
import { useId } from 'react';
import type { Api } from '../api';
import type { Invoice } from '../types';
import { fromMinor, toMinor } from './amount';
import { ActionForm, filled, FormError, useSubmitter, type Values } from './kit';

const units = (invoice: Invoice) => `${invoice.currency.toUpperCase()}, e.g. 12.50`;

/** `POST /v1/credit_notes` (invoice page): an amount spread over the lines, or nothing but its reason. */
export function CreditNoteForm({ api, invoice, onDone, onCancel }: { api: Api; invoice: Invoice; onDone: () => void; onCancel: () => void }) {
  const body = (v: Values) => ({ ...filled(v), invoice_id: invoice.id, amount: toMinor(v.amount, invoice.currency) });
  return (
    <ActionForm
      api={api}
      title="Issue a credit note"
      route={creditNoteApi.createCreditNote}
      fields={[
        { name: 'amount', label: 'Amount', hint: `In ${units(invoice)}; spread over the lines by what each can take.` },
        { name: 'reason', label: 'Reason', kind: 'select', options: CREDIT_NOTE_REASONS },
        { name: 'refund', label: 'Refund', kind: 'select', options: ['', ...CREDIT_NOTE_REFUNDS], hint: 'How money already received goes back (empty: NONE).' },
        { name: 'memo', label: 'Memo', kind: 'textarea' },
      ]}
      initial={{ reason: 'PRODUCT_UNSATISFACTORY' }}
      body={body}
      submitLabel="Issue credit note"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}

/** `POST /v1/payments` (invoice page): money received outside (OFFLINE), from a wallet (CREDITS) or a processor's (PROVIDER). */
export function PaymentForm({ api, invoice, onDone, onCancel }: { api: Api; invoice: Invoice; onDone: () => void; onCancel: () => void }) {
  const body = (v: Values) => ({ ...filled(v), invoice_id: invoice.id, amount: toMinor(v.amount, invoice.currency) });
  return (
    <ActionForm
      api={api}
      title="Record a payment"
      route={invoiceApi.createPayment}
      fields={[
        { name: 'amount', label: 'Amount', hint: `In ${units(invoice)}.` },
        { name: 'payment_method_type', label: 'Method', kind: 'select', options: PAYMENT_METHOD_TYPES },
        { name: 'wallet_id', label: 'Wallet id', hint: 'CREDITS only: the wallet that pays.' },
        { name: 'provider', label: 'Provider', hint: 'PROVIDER only, e.g. stripe.' },
        { name: 'reference', label: 'Reference', hint: 'e.g. the wire transfer’s reference.' },
      ]}
      initial={{ amount: fromMinor(invoice.amount_remaining, invoice.currency), payment_method_type: 'OFFLINE' }}
      body={body}
      submitLabel="Record payment"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}

/** `POST /v1/invoices/{id}/void` (invoice page), after a confirm step that says what it does. */
export function VoidInvoiceForm({ api, invoice, onDone, onCancel }: { api: Api; invoice: Invoice; onDone: () => void; onCancel: () => void }) {
  const submitter = useSubmitter(api, []);
  const titleId = useId();
  const name = invoice.invoice_number ?? `draft ${invoice.id}`;
  const confirm = async () => {
    if (await submitter.send({ route: invoiceApi.voidInvoice, params: { id: invoice.id }, body: {} })) onDone();
  };
  return (
    <div role="group" aria-labelledby={titleId} className="action">
      <h3 id={titleId}>Void invoice {name}?</h3>
      <p>It will count no more: credits it took go back to their wallets. This cannot be undone.</p>
      <FormError errors={submitter.errors} />
      <div className="buttons">
        <button type="button" className="danger" disabled={submitter.busy} onClick={confirm}>
          {submitter.busy ? 'Voiding…' : `Void invoice ${name}`}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Keep it
        </button>
      </div>
    </div>
  );
}

/** `POST /v1/invoices/{id}/finalize` (invoice page): numbers the draft, applies wallet credits, after a confirm step. */
export function FinalizeInvoiceForm({ api, invoice, onDone, onCancel }: { api: Api; invoice: Invoice; onDone: () => void; onCancel: () => void }) {
  const submitter = useSubmitter(api, []);
  const titleId = useId();
  const confirm = async () => {
    if (await submitter.send({ route: invoiceApi.finalizeInvoice, params: { id: invoice.id }, body: {} })) onDone();
  };
  return (
    <div role="group" aria-labelledby={titleId} className="action">
      <h3 id={titleId}>Finalize draft {invoice.id}?</h3>
      <p>It gets its number and due date, takes the customer's wallet credits, and its lines no longer change.</p>
      <FormError errors={submitter.errors} />
      <div className="buttons">
        <button type="button" disabled={submitter.busy} onClick={confirm}>
          {submitter.busy ? 'Finalizing…' : 'Finalize invoice'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Keep the draft
        </button>
      </div>
    </div>
  );
}
