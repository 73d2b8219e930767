import type { Api } from '../api';
import { ChartFigure } from '../charts/ChartFigure';
import { align, buckets, lastDays, lastHours, moneyByCurrency } from '../charts/series';
import { Loaded, useLoad } from '../data';
import { money, when } from '../format';
import { href } from '../router';

interface Monitoring {
  total_events: number;
  last_event_at: string | null;
  consumer_lag: number;
  dead_lettered_events: number;
}

interface BillingDaily {
  days: Array<{ date: string; currency: string; invoiced: number; collected: number }>;
}

interface Failures {
  since: string;
  failed_attempts: number;
  endpoints: Array<{ endpoint_id: string; url: string; failed_attempts: number; last_failed_at: string; last_error: string | null }>;
}

const HOURS = 24;
const DAYS = 14;

interface EventsHourly {
  since: string;
  hours: Array<{ hour: string; events: number }>;
}

/** Events stored in each of the last 24 hours, in one call (GET /v1/reports/events_hourly: counted per stored batch, never by counting events). */
async function eventsPerHour(api: Api) {
  const answer = await api.get<EventsHourly>('/v1/reports/events_hourly', { hours: HOURS });
  const { to } = lastHours(HOURS);
  const byHour = new Map(answer.hours.map((h) => [Date.parse(h.hour) / 1000, h.events]));
  return align([{ label: 'Events', points: buckets(answer.since, to, 'HOUR').map((at) => ({ at, value: byHour.get(at) ?? 0 })) }]);
}

/** The overview: events per hour, invoiced and collected per day, failing webhooks. */
export function OverviewPage({ api }: { api: Api }) {
  const monitoring = useLoad(() => api.get<Monitoring>('/v1/events/monitoring'), []);
  const hourly = useLoad(() => eventsPerHour(api), []);
  const range = lastDays(DAYS);
  const billing = useLoad(() => api.get<BillingDaily>('/v1/reports/billing_daily', { start_date: range.from.slice(0, 10), end_date: range.to.slice(0, 10) }), []);
  const failures = useLoad(() => api.get<Failures>('/v1/reports/webhook_failures', { hours: HOURS }), []);
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <h2>Events</h2>
      <Loaded load={monitoring}>
        {(m) => (
          <dl className="facts">
            <dt>Stored events</dt>
            <dd>{m.total_events}</dd>
            <dt>Last event</dt>
            <dd>{when(m.last_event_at)}</dd>
            <dt>Waiting to be stored</dt>
            <dd>{m.consumer_lag}</dd>
            <dt>Dead-lettered</dt>
            <dd>{m.dead_lettered_events}</dd>
          </dl>
        )}
      </Loaded>
      <Loaded load={hourly}>{(data) => <ChartFigure title={`Events per hour, last ${HOURS} hours`} data={data} labels={['Events']} hourly bars />}</Loaded>
      <h2>Invoiced and collected</h2>
      <Loaded load={billing}>
        {(b) => {
          const charts = moneyByCurrency(b.days, range.from, range.to);
          if (charts.length === 0) return <p>Nothing invoiced or collected in the last {DAYS} days.</p>;
          return charts.map(({ currency, data }) => (
            <ChartFigure key={currency} title={`Invoiced and collected per day, ${currency.toUpperCase()}, last ${DAYS} days`} data={data} labels={['Invoiced', 'Collected']} bars format={(v) => money(v, currency)} />
          ));
        }}
      </Loaded>
      <h2>Failing webhooks</h2>
      <Loaded load={failures}>
        {(f) =>
          f.failed_attempts === 0 ? (
            <p>No failed delivery attempt in the last {HOURS} hours.</p>
          ) : (
            <table>
              <caption>{`${f.failed_attempts} failed delivery attempts in the last ${HOURS} hours`}</caption>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Failed attempts</th>
                  <th scope="col">Last failure</th>
                  <th scope="col">Last error</th>
                </tr>
              </thead>
              <tbody>
                {f.endpoints.map((e) => (
                  <tr key={e.endpoint_id}>
                    <td>
                      <a href={href({ page: 'webhook', id: e.endpoint_id })}>{e.url}</a>
                    </td>
                    <td>{e.failed_attempts}</td>
                    <td>{when(e.last_failed_at)}</td>
                    <td>{e.last_error ?? '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}
