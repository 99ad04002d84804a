// Spans per second over the sampled window as an SVG line chart: no canvas,
// no inline style (the CSP forbids it), a text summary for screen readers.
import { html } from 'htm/preact';
import { count } from './format.js';
import type { Stats } from './types.js';

const WIDTH = 720;
const HEIGHT = 180;
const PAD = 32;
const LEFT = 64; // room for the scale's label

const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 3 });

/** The scale's top as it fits its margin: 500, 2K, 5M, 0.05. */
function compact(n: number): string {
  return COMPACT.format(n);
}

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

export function SpansChart({ series, windowMs, now }: { series: Stats['series']; windowMs: number; now: number }) {
  const max = niceMax(Math.max(0, ...series.map((point) => Math.max(point.acceptedPerSecond, point.sentPerSecond))));
  const x = (at: number) => LEFT + ((at - (now - windowMs)) / windowMs) * (WIDTH - LEFT - PAD);
  const y = (value: number) => HEIGHT - PAD - (value / max) * (HEIGHT - 2 * PAD);
  const line = (pick: (point: Stats['series'][number]) => number) => series.map((point) => `${x(point.at).toFixed(1)},${y(pick(point)).toFixed(1)}`).join(' ');
  const last = series.at(-1);
  const summary = last === undefined ? 'No samples yet.' : `Now ${count(last.acceptedPerSecond)} spans/s accepted, ${count(last.sentPerSecond)} spans/s sent (scale 0 to ${count(max)} spans/s).`;
  const minutes = Math.round(windowMs / 60_000);
  return html`
    <figure class="chart">
      <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${`Spans per second over the last ${minutes} minutes. ${summary}`} data-points=${series.length}>
        <line class="axis" x1=${LEFT} y1=${HEIGHT - PAD} x2=${WIDTH - PAD} y2=${HEIGHT - PAD} />
        <line class="axis" x1=${LEFT} y1=${PAD} x2=${LEFT} y2=${HEIGHT - PAD} />
        <text class="tick" x=${LEFT - 6} y=${PAD + 4} text-anchor="end">${compact(max)}/s</text>
        <text class="tick" x=${LEFT - 6} y=${HEIGHT - PAD + 4} text-anchor="end">0</text>
        <text class="tick" x=${LEFT} y=${HEIGHT - 8}>−${minutes} min</text>
        <text class="tick" x=${WIDTH - PAD} y=${HEIGHT - 8} text-anchor="end">now</text>
        <polyline class="series accepted" points=${line((point) => point.acceptedPerSecond)} />
        <polyline class="series sent" points=${line((point) => point.sentPerSecond)} />
      </svg>
      <figcaption><span class="key accepted">accepted</span> <span class="key sent">sent</span> spans per second, last ${minutes} minutes. <span class="muted">${summary}</span></figcaption>
    </figure>
  `;
}
