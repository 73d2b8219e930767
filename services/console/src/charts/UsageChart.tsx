import type { Api } from '../api';
import { Loaded, useLoad } from '../data';
import { ChartFigure } from './ChartFigure';
import { align, lastDays, windowSeries } from './series';

interface MeterUsage {
  meter_id: string;
  value: string;
  windows: Array<{ start: string; end: string; value: string }>;
}

/** A customer's daily usage through some meters over the last `days` days (POST /v1/meters/{id}/usage, DAY windows). */
export function UsageChart({ api, externalCustomerId, meters, days = 14 }: { api: Api; externalCustomerId: string; meters: Array<{ id: string; name: string }>; days?: number }) {
  const key = meters.map((m) => m.id).join(',');
  const load = useLoad(async () => {
    const { from, to } = lastDays(days);
    const answers = await Promise.all(
      meters.map((m) => api.post<MeterUsage>(`/v1/meters/${encodeURIComponent(m.id)}/usage`, { external_customer_id: externalCustomerId, start_time: from, end_time: to, window_size: 'DAY' })),
    );
    return align(answers.map((a, i) => windowSeries(meters[i]?.name ?? a.meter_id, a.windows, from, to, 'DAY')));
  }, [externalCustomerId, key, days]);
  if (meters.length === 0) return <p>No meter to chart.</p>;
  return <Loaded load={load}>{(data) => <ChartFigure title={`Usage per day, last ${days} days`} data={data} labels={meters.map((m) => m.name)} bars />}</Loaded>;
}
