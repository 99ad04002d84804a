// A reload that takes a component or pipeline out of the config would leave
// its series in /metrics for the process's life, gauges at their last values
// (a queue still "holding" records no exporter reads any more). Series are
// kept across reloads for the components that stay, so only the removed
// ones' are dropped.
import type { Telemetry } from '../shared/telemetry.js';
import type { GraphConfig } from './graph.js';

type Kind = 'receivers' | 'processors' | 'exporters' | 'pipelines';

/** The labels that name a component or pipeline. */
const NAMING_LABELS: Readonly<Record<string, Kind>> = {
  receiver: 'receivers',
  listener: 'receivers',
  processor: 'processors',
  sampler: 'processors',
  exporter: 'exporters',
  queue: 'exporters',
  pipeline: 'pipelines',
};

function idsOf(config: GraphConfig, kind: Kind): string[] {
  return kind === 'pipelines' ? Object.keys(config.service.pipelines) : [...config[kind].keys()];
}

/** Forgets the series of what `before` had and `after` has not. */
export async function forgetRemovedSeries(telemetry: Telemetry, before: GraphConfig, after: GraphConfig): Promise<void> {
  const known = new Map<Kind, { readonly all: string[]; readonly kept: Set<string> }>();
  for (const kind of new Set(Object.values(NAMING_LABELS))) {
    const kept = new Set(idsOf(after, kind));
    const removed = idsOf(before, kind).filter((id) => !kept.has(id));
    if (removed.length > 0) known.set(kind, { all: [...kept, ...removed], kept });
  }
  if (known.size === 0) return;
  await telemetry.forgetSeries(function removed(value, label) {
    const kind = NAMING_LABELS[label];
    const ids = kind === undefined ? undefined : known.get(kind);
    if (ids === undefined) return false;
    // A value names the longest id it is or begins with: a listener is `<receiver>` or `<receiver>/<protocol>`.
    let owner: string | undefined;
    for (const id of ids.all) {
      if ((value === id || value.startsWith(`${id}/`)) && id.length > (owner?.length ?? -1)) owner = id;
    }
    return owner !== undefined && !ids.kept.has(owner);
  });
}
