// Kept and dropped spans per sampler and rule (rule = the rule's index,
// `no_rule` for spans of traces no rule matched, `all` when there are no rules).
import type { Telemetry } from '../../shared/telemetry.js';

export function samplingMetrics(telemetry: Telemetry) {
  return {
    kept: telemetry.counter('sluice_sampling_kept_spans_total', 'Spans kept by a sampling rule.', ['sampler', 'rule']),
    dropped: telemetry.counter('sluice_sampling_dropped_spans_total', 'Spans dropped by sampling, by the rule that decided.', ['sampler', 'rule']),
    pending: telemetry.gauge('sluice_sampling_pending_spans', 'Spans waiting for their trace root to decide.', ['sampler']),
  };
}

export type SamplingMetrics = ReturnType<typeof samplingMetrics>;

/** Per-batch tallies, flushed to the counters once per batch. */
export class RuleTally {
  readonly #kept = new Map<string, number>();
  readonly #dropped = new Map<string, number>();

  add(rule: string, keep: boolean, spans = 1): void {
    const map = keep ? this.#kept : this.#dropped;
    map.set(rule, (map.get(rule) ?? 0) + spans);
  }

  flush(metrics: SamplingMetrics, sampler: string): void {
    for (const [rule, count] of this.#kept) metrics.kept.inc({ sampler, rule }, count);
    for (const [rule, count] of this.#dropped) metrics.dropped.inc({ sampler, rule }, count);
  }
}
