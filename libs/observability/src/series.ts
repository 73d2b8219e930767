import type { Registry } from 'prom-client';

/**
 * Counters and histograms whose series are made once per label values and then updated with
 * plain arithmetic (ADR 0020): prom-client's own children hash their label object on every
 * `inc` and `observe`, which a request or a debit would pay each time. These register in a
 * prom-client Registry (its `registerMetric` takes any object with `get()`), so the exposition,
 * the default metrics and the scraped gauges stay prom-client's.
 */
interface MetricShape {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
}

type Labels = Record<string, string>;
type Tree<S> = Map<string, Tree<S> | S>;

/** Series by label values, through nested maps: a lookup allocates nothing. */
class SeriesTable<S> {
  private readonly root: Tree<S> = new Map();
  readonly all: S[] = [];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: (labels: Labels) => S,
  ) {}

  get(values: readonly string[]): S {
    let node: Tree<S> = this.root;
    const last = this.labelNames.length - 1;
    if (last < 0) {
      let only = node.get('') as S | undefined;
      if (!only) node.set('', (only = this.create(values)));
      return only;
    }
    for (let i = 0; i < last; i += 1) {
      let next = node.get(values[i]) as Tree<S> | undefined;
      if (!next) node.set(values[i], (next = new Map()));
      node = next;
    }
    let series = node.get(values[last]) as S | undefined;
    if (!series) node.set(values[last], (series = this.create(values)));
    return series;
  }

  private create(values: readonly string[]): S {
    const labels: Labels = {};
    this.labelNames.forEach((name, i) => {
      labels[name] = String(values[i]);
    });
    const series = this.make(labels);
    this.all.push(series);
    return series;
  }
}

export interface CounterSeries {
  inc(by?: number): void;
}

export class FastCounter<L extends string = never> implements MetricShape {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly table: SeriesTable<{ labels: Labels; value: number; inc(by?: number): void }>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[],
    registry: Registry,
  ) {
    this.table = new SeriesTable(labelNames, (labels) => ({
      labels,
      value: 0,
      inc(by = 1) {
        this.value += by;
      },
    }));
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in labelNames order), made on first use. */
  labels(...values: string[]): CounterSeries {
    return this.table.get(values);
  }

  inc(by = 1): void {
    this.table.get([]).inc(by);
  }

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.table.all.map((s) => ({ labels: s.labels, value: s.value })) };
  }
}

export interface HistogramSeries {
  observe(value: number): void;
}

interface HistogramState extends HistogramSeries {
  labels: Labels;
  counts: Float64Array;
  sum: number;
  count: number;
}

export class FastHistogram<L extends string = never> implements MetricShape {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly table: SeriesTable<HistogramState>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    const bounds = [...buckets];
    this.table = new SeriesTable(labelNames, (labels) => ({
      labels,
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      observe(value: number) {
        let i = 0;
        while (i < bounds.length && value > bounds[i]) i += 1;
        this.counts[i] += 1;
        this.sum += value;
        this.count += 1;
      },
    }));
    registry.registerMetric(this as never);
  }

  labels(...values: string[]): HistogramSeries {
    return this.table.get(values);
  }

  observe(value: number): void {
    this.table.get([]).observe(value);
  }

  async get() {
    const values: Array<{ labels: Labels; value: number; metricName: string }> = [];
    for (const s of this.table.all) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += s.counts[i];
        values.push({ labels: { ...s.labels, le: String(bound) }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
