import { CHANGE_EFFECTIVE, couponApi, planChangeApi, PRORATION_BEHAVIORS } from '@billstream/contracts';
import { useId, useState, type FormEvent } from 'react';
import type { Api, Page } from '../api';
import { Loaded, useLoad } from '../data';
import { money, when } from '../format';
import type { Subscription } from '../types';
import { ActionForm, Field, filled, FormError, useSubmitter, type FieldDef, type Values } from './kit';

interface Plan {
  id: string;
  name: string;
  status: string;
}

interface Preview {
  subscription: { plan_id: string; current_period_start: string | null; current_period_end: string | null; effective_at: string };
  invoice: { currency: string; total: number; amount_due: number; line_items: Array<{ description: string; amount: number }> } | null;
}

const CHANGE_FIELDS = ['plan_id', 'effective', 'proration_behavior'];

/**
 * `POST /v1/subscriptions/{id}/change/preview` first, then the same body to `POST .../change`
 * (a customer's subscription row): the person sees what the change bills before making it.
 * The preview keeps the form's idempotency key; the change sends it.
 */
export function ChangePlanForm({ api, subscription, onDone, onCancel }: { api: Api; subscription: Subscription; onDone: () => void; onCancel: () => void }) {
  const plans = useLoad(() => api.get<Page<Plan>>('/v1/plans', { status: 'active', limit: 100 }), []);
  const [values, setValues] = useState<Values>({ plan_id: '', effective: 'immediately', proration_behavior: 'create_prorations' });
  const [preview, setPreview] = useState<Preview | null>(null);
  const submitter = useSubmitter(api, CHANGE_FIELDS);
  const titleId = useId();
  const params = { id: subscription.id };
  const showPreview = async (e: FormEvent) => {
    e.preventDefault();
    const sent = await submitter.send<Preview>({ route: planChangeApi.previewSubscriptionChange, params, body: filled(values), idempotent: false });
    if (sent) setPreview(sent.result);
  };
  const confirm = async () => {
    if (await submitter.send({ route: planChangeApi.changeSubscription, params, body: filled(values) })) onDone();
  };
  const fields = (options: Plan[]): FieldDef[] => [
    { name: 'plan_id', label: 'New plan', kind: 'select', options: [{ value: '', label: 'Choose a plan' }, ...options.filter((p) => p.id !== subscription.plan_id).map((p) => ({ value: p.id, label: `${p.name} (${p.id})` }))] },
    { name: 'effective', label: 'Effective', kind: 'select', options: CHANGE_EFFECTIVE },
    { name: 'proration_behavior', label: 'Proration', kind: 'select', options: PRORATION_BEHAVIORS },
  ];
  return (
    <form className="action" aria-labelledby={titleId} onSubmit={showPreview} noValidate>
      <h3 id={titleId}>Change the plan of {subscription.id}</h3>
      <FormError errors={submitter.errors} />
      <Loaded load={plans}>
        {(page) =>
          fields(page.items).map((def) => (
            <Field
              key={def.name}
              def={def}
              value={values[def.name] ?? ''}
              error={submitter.errors.fields[def.name]}
              onChange={(v) => {
                setPreview(null);
                setValues((old) => ({ ...old, [def.name]: v }));
              }}
            />
          ))
        }
      </Loaded>
      {preview && <PreviewView preview={preview} />}
      <div className="buttons">
        {preview ? (
          <button type="button" disabled={submitter.busy} onClick={confirm}>
            {submitter.busy ? 'Changing…' : 'Confirm the change'}
          </button>
        ) : (
          <button type="submit" disabled={submitter.busy}>
            {submitter.busy ? 'Previewing…' : 'Preview the change'}
          </button>
        )}
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function PreviewView({ preview }: { preview: Preview }) {
  const { subscription: s, invoice } = preview;
  return (
    <section aria-label="Preview of the change" className="preview">
      <p>
        From {when(s.effective_at)} the subscription is on plan {s.plan_id}, period {when(s.current_period_start)} – {when(s.current_period_end)}.
      </p>
      {invoice ? (
        <>
          <table>
            <caption>The invoice the change makes</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Amount</th>
              </tr>
            </thead>
            <tbody>
              {invoice.line_items.map((l, i) => (
                <tr key={i}>
                  <td>{l.description}</td>
                  <td>{money(l.amount, invoice.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="totals">
            Total {money(invoice.total, invoice.currency)}, due {money(invoice.amount_due, invoice.currency)}
          </p>
        </>
      ) : (
        <p>The change bills nothing now.</p>
      )}
    </section>
  );
}

/** `POST /v1/subscriptions/{id}/discounts` (a customer's subscription row): a coupon by its code or its id. */
export function ApplyCouponForm({ api, subscription, onDone, onCancel }: { api: Api; subscription: Subscription; onDone: () => void; onCancel: () => void }) {
  return (
    <ActionForm
      api={api}
      title={`Apply a coupon to ${subscription.id}`}
      route={couponApi.attachDiscount}
      params={{ id: subscription.id }}
      fields={[
        { name: 'code', label: 'Coupon code', placeholder: 'LAUNCH20' },
        { name: 'coupon_id', label: 'or coupon id' },
      ]}
      submitLabel="Apply coupon"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}
