// A counter and a histogram for the series every request moves (requests by route,
// method, status and code; their durations; the gateway's stage times). prom-client's
// own build a string from the labels object and check each label's name on every call,
// which was a twentieth of a refusal's CPU; these find their cell by the label values
// joined, and hand the registry the same data prom-client's Counter and Histogram do,
// so /metrics reads the same. They register in a prom-client Registry like any metric.
import type { Registry } from "prom-client";

interface Exported {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: { value: number; labels: Record<string, string | number>; sharedLabels?: Record<string, string>; metricName?: string; exemplar?: null }[];
}

/** Label values in the label names' order → one cell, made on first use. */
class Cells<C> {
  private readonly byKey = new Map<string, C>();
  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: (labels: Record<string, string>) => C,
  ) {}

  at(values: readonly string[]): C {
    let key = values[0] ?? "";
    for (let i = 1; i < values.length; i++) key += "\u0000" + values[i];
    let cell = this.byKey.get(key);
    if (cell === undefined) {
      if (values.length !== this.labelNames.length) throw new Error(`expected ${this.labelNames.length} label values, got ${values.length}`);
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      this.byKey.set(key, (cell = this.make(labels)));
    }
    return cell;
  }

  all(): IterableIterator<C> {
    return this.byKey.values();
  }

  clear(): void {
    this.byKey.clear();
  }
}

interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

export class HotCounter<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "counter";
  private readonly cells: Cells<{ labels: Record<string, string>; value: number }>;

  constructor(o: MetricOptions<L>) {
    this.name = o.name;
    this.help = o.help;
    this.cells = new Cells(o.labelNames, (labels) => ({ labels, value: 0 }));
    for (const r of o.registers) r.registerMetric(this as never);
  }

  /** `values`: the label values in labelNames' order. */
  inc(values: readonly string[], by = 1): void {
    this.cells.at(values).value += by;
  }

  async get(): Promise<Exported> {
    const values = [...this.cells.all()].map((c) => ({ value: c.value, labels: c.labels }));
    return { name: this.name, help: this.help, type: "counter", aggregator: "sum", values };
  }

  reset(): void {
    this.cells.clear();
  }
}

interface HistogramCell {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative), the last for those above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

export class HotHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  private readonly bounds: readonly number[];
  private readonly cells: Cells<HistogramCell>;

  constructor(o: MetricOptions<L> & { buckets: readonly number[] }) {
    this.name = o.name;
    this.help = o.help;
    this.bounds = [...o.buckets].sort((a, b) => a - b);
    this.cells = new Cells(o.labelNames, (labels) => ({ labels, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 }));
    for (const r of o.registers) r.registerMetric(this as never);
  }

  /** `values`: the label values in labelNames' order; `v` in the bounds' unit. */
  observe(values: readonly string[], v: number): void {
    if (!Number.isFinite(v)) return;
    const cell = this.cells.at(values);
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    cell.counts[i]!++;
    cell.sum += v;
    cell.count++;
  }

  /** What prom-client's Histogram gives the registry for its text: buckets, +Inf, sum and count per label set. */
  async getForPromString(): Promise<Exported> {
    const values: Exported["values"] = [];
    for (const c of this.cells.all()) {
      let below = 0;
      this.bounds.forEach((le, i) => {
        below += c.counts[i]!;
        values.push({ labels: { le }, sharedLabels: c.labels, value: below, metricName: `${this.name}_bucket`, exemplar: null });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels: c.labels, value: c.count, metricName: `${this.name}_bucket`, exemplar: null });
      values.push({ labels: {}, sharedLabels: c.labels, value: c.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: c.labels, value: c.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: "histogram", aggregator: "sum", values };
  }

  /** The same with each value's labels in one object (the registry's JSON). */
  async get(): Promise<Exported> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    this.cells.clear();
  }
}
