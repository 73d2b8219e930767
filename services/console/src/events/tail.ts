import { useEffect, useState } from 'react';
import type { Api } from '../api';

export interface UsageEvent {
  id: string;
  event_name: string;
  external_customer_id: string;
  customer_id: string | null;
  timestamp: string;
  properties: Record<string, unknown>;
  source: string | null;
}

export interface EventsAnswer {
  events: UsageEvent[];
  has_more: boolean;
  total_count: number;
}

export const TAIL_MAX = 50;
export const TAIL_EVERY_MS = 2000;

/**
 * The tail's list after a poll: the newest events first, each once (by id), at most `max`. The
 * poll answers the newest page; what the list had stays below what is new.
 */
export function mergeTail(current: UsageEvent[], polled: UsageEvent[], max = TAIL_MAX): UsageEvent[] {
  const seen = new Set<string>();
  const out: UsageEvent[] = [];
  const all = [...polled, ...current].sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  for (const e of all) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    out.push(e);
    if (out.length === max) break;
  }
  return out;
}

/** Polls the newest events every ~2 s while `on` (and the page) lasts; the list is bounded. */
export function useTail(api: Api, on: boolean, filter: { external_customer_id?: string; event_name?: string }, every = TAIL_EVERY_MS) {
  const [events, setEvents] = useState<UsageEvent[]>([]);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(filter);
  useEffect(() => {
    if (!on) return;
    let stopped = false;
    setEvents([]);
    const poll = async () => {
      try {
        const answer = await api.post<EventsAnswer>('/v1/events/query', { ...JSON.parse(key), page_size: 20 });
        if (!stopped) {
          setEvents((current) => mergeTail(current, answer.events));
          setError(null);
        }
      } catch (err) {
        if (!stopped) setError(err instanceof Error ? err.message : String(err));
      }
    };
    void poll();
    const timer = setInterval(() => void poll(), every);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [api, on, key, every]);
  return { events, error };
}
