import { Fragment, useReducer, useState } from 'react';
import type { Api, Page } from '../api';
import { Loaded, useLoad } from '../data';
import { decimalMoney, money, quantity, when } from '../format';
import { NameLink, useNames } from '../names';
import { ActionPanel, ActionToggle, Done } from '../forms/action';
import { ApplyCouponForm, ChangePlanForm, TopUpForm } from '../forms/lazy';
import type { Balance, Customer, Discount, Invoice, Subscription, Wallet } from '../types';
import { CustomerUsage } from '../charts/CustomerUsage';
import { CustomerHolds } from './CustomerHolds';
import { CustomerLedger } from './CustomerLedger';
import { InvoiceTable } from './Invoices';

interface Usage {
  totals: Array<{ currency: string; amount: number }>;
  subscriptions: Array<{ subscription_id: string; customer_id: string; currency: string; amount: number; items: Array<{ meter_id: string; display_name: string | null; quantity: string; amount: number }> }>;
}

/**
 * One customer: its record, wallets with their real-time balance, subscriptions, usage this
 * period and latest invoices; a wallet's row tops it up, a subscription's changes its plan or
 * applies a coupon (the form opens below the row; the page reloads after a success).
 */
export function CustomerPage({ api, id }: { api: Api; id: string }) {
  const [open, setOpen] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [version, reload] = useReducer((v: number) => v + 1, 0);
  const toggle = (action: string) => setOpen(open === action ? null : action);
  const succeeded = (message: string) => () => {
    setOpen(null);
    setDone(message);
    reload();
  };
  const customer = useLoad(() => api.get<Customer>(`/v1/customers/${encodeURIComponent(id)}`), [id]);
  const wallets = useLoad(async () => {
    const page = await api.get<Page<Wallet>>(`/v1/customers/${encodeURIComponent(id)}/wallets`, { limit: 50 });
    return Promise.all(page.items.map(async (w) => ({ wallet: w, balance: await api.get<Balance>(`/v1/wallets/${encodeURIComponent(w.id)}/balance`, { include_real_time_balance: true }) })));
  }, [id, version]);
  const subscriptions = useLoad(async () => {
    const page = await api.get<Page<Subscription>>('/v1/subscriptions', { customer_id: id, limit: 50 });
    return Promise.all(page.items.map(async (s) => ({ subscription: s, discounts: (await api.get<{ items: Discount[] }>(`/v1/subscriptions/${encodeURIComponent(s.id)}/discounts?limit=1000`)).items })));
  }, [id, version]);
  const usage = useLoad(() => api.get<Usage>(`/v1/customers/${encodeURIComponent(id)}/usage`, { include_children: true }), [id, version]);
  const invoices = useLoad(() => api.get<Page<Invoice>>('/v1/invoices', { customer_id: id, limit: 10 }), [id, version]);
  // Names where the API answers ids: the subscriptions' plans, the customers that pay for or use them.
  const subs = subscriptions.state === 'done' ? subscriptions.data.map((s) => s.subscription) : [];
  const planNames = useNames(api, 'plans', subs.map((s) => s.plan_id));
  const customerNames = useNames(api, 'customers', [
    ...(customer.state === 'done' && customer.data.parent_customer_id ? [customer.data.parent_customer_id] : []),
    ...subs.flatMap((s) => (s.invoicing_customer_id ? [s.invoicing_customer_id] : [])),
    ...(usage.state === 'done' ? usage.data.subscriptions.map((s) => s.customer_id) : []),
  ]);
  return (
    <section aria-labelledby="customer-title">
      <Loaded load={customer}>
        {(c) => (
          <>
            <h1 id="customer-title">{c.name ?? c.external_id}</h1>
            <dl className="facts">
              <dt>Id</dt>
              <dd>{c.id}</dd>
              <dt>External id</dt>
              <dd>{c.external_id}</dd>
              <dt>Email</dt>
              <dd>{c.email ?? '–'}</dd>
              <dt>Parent</dt>
              <dd>{c.parent_customer_id ? <NameLink kind="customers" id={c.parent_customer_id} names={customerNames} /> : '–'}</dd>
              <dt>Created</dt>
              <dd>{when(c.created_at)}</dd>
            </dl>
          </>
        )}
      </Loaded>
      <Done message={done} />
      <h2>Wallets</h2>
      <Loaded load={wallets}>
        {(list) =>
          list.length === 0 ? (
            <p>No wallets.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Wallet</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Real-time balance</th>
                  <th scope="col">Credits held</th>
                  <th scope="col">Credits available</th>
                  <th scope="col">Unbilled usage</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.map(({ wallet, balance }) => (
                  <Fragment key={wallet.id}>
                    <tr>
                      <td>{wallet.id}</td>
                      <td className="word">{wallet.wallet_type}</td>
                      <td className="word">{wallet.wallet_status}</td>
                      <td className="word">{decimalMoney(balance.balance, wallet.currency)}</td>
                      <td className="word">{decimalMoney(balance.real_time_balance, wallet.currency)}</td>
                      <td>{balance.credits_held === undefined ? '–' : quantity(balance.credits_held)}</td>
                      <td>{balance.credits_available === undefined ? '–' : quantity(balance.credits_available)}</td>
                      <td>{money(balance.unbilled_usage ?? 0, wallet.currency)}</td>
                      <td>
                        <ActionToggle label="Top up" open={open === `topup:${wallet.id}`} controls={`topup-${wallet.id}`} onToggle={() => toggle(`topup:${wallet.id}`)} />
                      </td>
                    </tr>
                    {open === `topup:${wallet.id}` && (
                      <tr>
                        <td colSpan={9}>
                          <ActionPanel id={`topup-${wallet.id}`}>
                            <TopUpForm api={api} wallet={wallet} onCancel={() => setOpen(null)} onDone={succeeded(`Wallet ${wallet.id} topped up.`)} />
                          </ActionPanel>
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <CustomerHolds api={api} id={id} version={version} />
      <h2>Subscriptions</h2>
      <Loaded load={subscriptions}>
        {(list) =>
          list.length === 0 ? (
            <p>No subscriptions.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Subscription</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Status</th>
                  <th scope="col">Paid by</th>
                  <th scope="col">Current period</th>
                  <th scope="col">Coupons</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.map(({ subscription: s, discounts }) => (
                  <Fragment key={s.id}>
                    <tr>
                      <td>{s.id}</td>
                      <td>
                        <NameLink kind="plans" id={s.plan_id} names={planNames} />
                      </td>
                      <td>{s.status}</td>
                      <td>{s.invoicing_customer_id ? <NameLink kind="customers" id={s.invoicing_customer_id} names={customerNames} /> : 'itself'}</td>
                      <td>
                        {when(s.current_period_start)} – {when(s.current_period_end)}
                      </td>
                      <td>{discounts.filter((d) => d.status === 'active').map((d) => d.coupon_id).join(', ') || '–'}</td>
                      <td>
                        <div className="buttons">
                          <ActionToggle label="Change plan" open={open === `plan:${s.id}`} controls={`plan-${s.id}`} onToggle={() => toggle(`plan:${s.id}`)} />
                          <ActionToggle label="Apply coupon" open={open === `coupon:${s.id}`} controls={`coupon-${s.id}`} onToggle={() => toggle(`coupon:${s.id}`)} />
                        </div>
                      </td>
                    </tr>
                    {(open === `plan:${s.id}` || open === `coupon:${s.id}`) && (
                      <tr>
                        <td colSpan={7}>
                          {open === `plan:${s.id}` ? (
                            <ActionPanel id={`plan-${s.id}`}>
                              <ChangePlanForm api={api} subscription={s} onCancel={() => setOpen(null)} onDone={succeeded(`The plan of ${s.id} changed.`)} />
                            </ActionPanel>
                          ) : (
                            <ActionPanel id={`coupon-${s.id}`}>
                              <ApplyCouponForm api={api} subscription={s} onCancel={() => setOpen(null)} onDone={succeeded(`Coupon applied to ${s.id}.`)} />
                            </ActionPanel>
                          )}
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <h2>Usage this period (with its children)</h2>
      <Loaded load={usage}>
        {(u) =>
          u.subscriptions.length === 0 ? (
            <p>No running subscription.</p>
          ) : (
            <>
              <ul className="totals">
                {u.totals.map((t) => (
                  <li key={t.currency}>{money(t.amount, t.currency)}</li>
                ))}
              </ul>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Subscription</th>
                    <th scope="col">Customer</th>
                    <th scope="col">Meter</th>
                    <th scope="col">Quantity</th>
                    <th scope="col">Amount</th>
                  </tr>
                </thead>
                <tbody>
                  {u.subscriptions.flatMap((s) =>
                    s.items.map((item) => (
                      <tr key={`${s.subscription_id}-${item.meter_id}`}>
                        <td>{s.subscription_id}</td>
                        <td>
                          <NameLink kind="customers" id={s.customer_id} names={customerNames} />
                        </td>
                        <td>{item.display_name ?? item.meter_id}</td>
                        <td>{quantity(item.quantity)}</td>
                        <td>{money(item.amount, s.currency)}</td>
                      </tr>
                    )),
                  )}
                </tbody>
              </table>
            </>
          )
        }
      </Loaded>
      <CustomerUsage api={api} id={id} />
      <CustomerLedger api={api} id={id} />
      <h2>Latest invoices</h2>
      <Loaded load={invoices}>{(page) => <InvoiceTable api={api} invoices={page.items} />}</Loaded>
    </section>
  );
}
