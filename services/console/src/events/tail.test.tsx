import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { act, render, screen } from '@testing-library/react';
import type { Api } from '../api';
import { mergeTail, TAIL_MAX, useTail, type EventsAnswer, type UsageEvent } from './tail';

const event = (n: number): UsageEvent => ({ id: `ev-${String(n).padStart(3, '0')}`, event_name: 'call', external_customer_id: 'acme', customer_id: null, timestamp: new Date(Date.UTC(2026, 10, 28, 10, 0, n)).toISOString(), properties: {}, source: null });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => event(to - i));

describe('mergeTail', () => {
  it('keeps the newest first, each event once, and at most the bound', () => {
    expect(mergeTail([], range(1, 3)).map((e) => e.id)).toEqual(['ev-003', 'ev-002', 'ev-001']);
    expect(mergeTail(range(1, 3), range(2, 5)).map((e) => e.id)).toEqual(['ev-005', 'ev-004', 'ev-003', 'ev-002', 'ev-001']);
    const merged = mergeTail(range(1, 45), range(40, 60));
    expect(merged).toHaveLength(TAIL_MAX);
    expect(merged[0]!.id).toBe('ev-060');
    expect(merged[TAIL_MAX - 1]!.id).toBe('ev-011');
  });
});

function Tail({ api, on }: { api: Api; on: boolean }) {
  const { events } = useTail(api, on, { event_name: 'call' });
  return <ol>{events.map((e) => <li key={e.id}>{e.id}</li>)}</ol>;
}

describe('useTail', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('polls every 2 s while on, shows what arrives newest first, bounded, and stops when off', async () => {
    let newest = 30;
    const bodies: unknown[] = [];
    const post = jest.fn(async (_path: string, body: unknown) => {
      bodies.push(body);
      return { events: range(Math.max(1, newest - 19), newest), has_more: true, total_count: newest } as EventsAnswer;
    });
    const api = { get: jest.fn(), post, delete: jest.fn() } as unknown as Api;
    const view = render(<Tail api={api} on />);
    await act(async () => undefined);
    expect(screen.getAllByRole('listitem').map((li) => li.textContent).slice(0, 2)).toEqual(['ev-030', 'ev-029']);
    newest = 75;
    await act(async () => {
      jest.advanceTimersByTime(2000);
    });
    const shown = () => screen.getAllByRole('listitem').map((li) => li.textContent);
    expect(shown()).toEqual([...range(56, 75), ...range(11, 30)].map((e) => e.id));
    newest = 100;
    await act(async () => {
      jest.advanceTimersByTime(2000);
    });
    expect(shown()).toHaveLength(TAIL_MAX);
    expect(shown()).toEqual([...range(81, 100), ...range(56, 75), ...range(21, 30)].map((e) => e.id));
    expect(bodies[0]).toEqual({ event_name: 'call', page_size: 20 });
    expect(post).toHaveBeenCalledTimes(3);
    view.rerender(<Tail api={api} on={false} />);
    await act(async () => {
      jest.advanceTimersByTime(10_000);
    });
    expect(post).toHaveBeenCalledTimes(3);
  });
});
