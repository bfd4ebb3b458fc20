// A server-rendered stacked bar chart (one bar per day, one colour per app). Plain
// SVG with a <title> per bar segment; the same numbers are in a table beside it for
// screen readers and for copying.
const COLOURS = ["#0b57d0", "#e8710a", "#1a7f37", "#a142f4", "#d93025", "#129eaf", "#9a6700", "#5f6368"];

export const colourFor = (i: number): string => COLOURS[i % COLOURS.length];

export interface Series {
  label: string;
  /** One value per day, aligned with `days`. */
  values: number[];
}

export function StackedBars(p: { id: string; title: string; days: string[]; series: Series[]; unit: string }) {
  const W = 600, H = 180, left = 44, bottom = 22, top = 8;
  const n = p.days.length;
  const totals = p.days.map((_, i) => p.series.reduce((s, x) => s + x.values[i], 0));
  const max = Math.max(1, ...totals);
  const plotW = W - left - 4, plotH = H - top - bottom;
  const slot = plotW / n, bar = Math.max(2, slot * 0.7);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  return (
    <figure class="chart" id={p.id}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${p.id}-t`}>
        <title id={`${p.id}-t`}>{`${p.title}, last ${n} days, highest day ${max.toLocaleString("en-US")} ${p.unit}`}</title>
        <line x1={left} x2={W - 4} y1={y(0)} y2={y(0)} stroke="#57606a" />
        <line x1={left} x2={W - 4} y1={y(max)} y2={y(max)} stroke="#d0d7de" />
        <text x={left - 4} y={y(max) + 4} text-anchor="end" font-size="10">{max.toLocaleString("en-US")}</text>
        <text x={left - 4} y={y(0)} text-anchor="end" font-size="10">0</text>
        {p.days.map((day, i) => {
          let base = 0;
          const x = left + i * slot + (slot - bar) / 2;
          return (
            <g>
              {p.series.map((s, k) => {
                const v = s.values[i];
                if (v === 0) return null;
                const y0 = y(base), y1 = y(base + v);
                base += v;
                return (
                  <rect x={x} y={y1} width={bar} height={Math.max(1, y0 - y1)} fill={colourFor(k)} data-day={day} data-app={s.label} data-value={String(v)}>
                    <title>{`${day} · ${s.label}: ${v.toLocaleString("en-US")} ${p.unit}`}</title>
                  </rect>
                );
              })}
              {i % 7 === n % 7 || i === n - 1 ? <text x={x + bar / 2} y={H - 6} text-anchor="middle" font-size="10">{day.slice(5)}</text> : null}
            </g>
          );
        })}
      </svg>
      <figcaption>{p.title}</figcaption>
    </figure>
  );
}
