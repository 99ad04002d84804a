// Reads sluice_event_loop_delay_seconds from a daemon's /metrics, so a
// benchmark can say how often, and how long, its event loop was held during
// a window: the difference of the cumulative buckets before and after.
const METRIC = 'sluice_event_loop_delay_seconds';
const STALL_SECONDS = 0.002;

/** Cumulative count per upper bound (`+Inf` included), as Prometheus serves them. */
export type DelayBuckets = ReadonlyMap<string, number>;

export async function delayBuckets(adminOrigin: string): Promise<DelayBuckets> {
  const text = await (await fetch(`${adminOrigin}/metrics`)).text();
  const buckets = new Map<string, number>();
  for (const match of text.matchAll(new RegExp(`^${METRIC}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm'))) buckets.set(match[1] ?? '', Number(match[2]));
  if (buckets.size === 0) throw new Error(`no ${METRIC} in ${adminOrigin}/metrics`);
  return buckets;
}

export interface DelayWindow {
  /** Samples recorded in the window. */
  readonly count: number;
  /** Samples more than 2 ms late. */
  readonly over2ms: number;
  /** The highest bucket that got a sample, as `<= 0.005 s` or `> 2.5 s`. */
  readonly worst: string;
}

export function delayShares(before: DelayBuckets, after: DelayBuckets): DelayWindow {
  const delta = (le: string): number => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const count = delta('+Inf');
  const bounds = [...after.keys()].filter((le) => le !== '+Inf').sort((a, b) => Number(a) - Number(b));
  const within2ms = bounds.filter((le) => Number(le) <= STALL_SECONDS).reduce((max, le) => Math.max(max, delta(le)), 0);
  let worst = 'none';
  let below = 0;
  for (const le of bounds) {
    const upTo = delta(le);
    if (upTo > below) worst = `<= ${le} s`;
    below = upTo;
  }
  if (count > below) worst = `> ${bounds.at(-1) ?? '?'} s`;
  return { count, over2ms: count - within2ms, worst };
}

/** The buckets of several processes (each with its own loop) as one histogram: cumulative counts add up. */
export function addBuckets(list: readonly DelayBuckets[]): DelayBuckets {
  const sum = new Map<string, number>();
  for (const buckets of list) for (const [le, count] of buckets) sum.set(le, (sum.get(le) ?? 0) + count);
  return sum;
}
