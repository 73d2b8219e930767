import type { Api } from '../api';
import { Loaded, useLoad } from '../data';
import type { Customer } from '../types';
import { UsageChart } from './UsageChart';

interface Usage {
  subscriptions: Array<{ customer_id: string; items: Array<{ meter_id: string; display_name: string | null }> }>;
}

/** The customer page's usage per meter over time: the meters its running subscriptions bill, charted per day. */
export function CustomerUsage({ api, id }: { api: Api; id: string }) {
  const load = useLoad(async () => {
    const [customer, usage] = await Promise.all([api.get<Customer>(`/v1/customers/${encodeURIComponent(id)}`), api.get<Usage>(`/v1/customers/${encodeURIComponent(id)}/usage`)]);
    const meters = new Map<string, string>();
    for (const s of usage.subscriptions) if (s.customer_id === id) for (const item of s.items) meters.set(item.meter_id, item.display_name ?? item.meter_id);
    return { externalId: customer.external_id, meters: [...meters].map(([meterId, name]) => ({ id: meterId, name })) };
  }, [id]);
  return (
    <>
      <h2>Usage per meter over time</h2>
      <Loaded load={load}>{(d) => <UsageChart api={api} externalCustomerId={d.externalId} meters={d.meters} />}</Loaded>
    </>
  );
}
