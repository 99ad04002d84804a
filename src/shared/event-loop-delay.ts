// sluice_event_loop_delay_seconds: how late the event loop ran its timers,
// as a Prometheus histogram fed from perf_hooks.monitorEventLoopDelay.
//
// The monitor keeps an HDR histogram in native code and exposes only its
// count and percentiles, not the samples. So the samples recorded since the
// last fold are replayed into the Prometheus histogram from the percentile
// steps (each step's share of the count, at that step's value): counts are
// exact, bucket placement is as fine as the percentile steps (finest in the
// tail, where stalls are), and the sum is approximate.
import { monitorEventLoopDelay, type RecordableHistogram } from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';

export const EVENT_LOOP_DELAY_METRIC = 'sluice_event_loop_delay_seconds';
// The monitor's timer period: a stall shorter than this is seen only if the
// timer falls due during it. 20 ms wakes an idle daemon 50 times a second.
const RESOLUTION_MS = 20;
const FOLD_INTERVAL_MS = 10_000; // folds between scrapes keep each fold's replay short
const BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]; // s

/** Starts monitoring; the monitor and its fold timer never keep the process alive. */
export function registerEventLoopDelay(registry: Registry): void {
  const monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  monitor.enable();
  const histogram: Histogram = new Histogram({
    name: EVENT_LOOP_DELAY_METRIC,
    help: `Event-loop delay: how late a ${RESOLUTION_MS} ms timer ran, in seconds (perf_hooks.monitorEventLoopDelay).`,
    buckets: BUCKETS,
    registers: [registry],
    collect: function foldOnScrape() {
      fold(monitor, histogram);
    },
  });
  setInterval(function foldPeriodically() {
    fold(monitor, histogram);
  }, FOLD_INTERVAL_MS).unref();
}

/** Moves the samples recorded since the last fold into the Prometheus histogram. */
export function fold(monitor: Pick<RecordableHistogram, 'count' | 'percentiles' | 'max' | 'reset'>, histogram: Histogram): void {
  const count = monitor.count;
  if (count === 0) return;
  // Each recorded value is the whole timer period; the delay is what exceeds the resolution.
  const delayOf = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1e3;
  let replayed = 0;
  for (const [percentile, ns] of monitor.percentiles) {
    const upTo = Math.round((count * percentile) / 100);
    const delay = delayOf(ns);
    for (; replayed < upTo; replayed++) histogram.observe(delay);
  }
  const max = delayOf(monitor.max);
  for (; replayed < count; replayed++) histogram.observe(max);
  monitor.reset();
}
