// Graph checks, as the collector does them: every reference resolves and
// every pipeline has a source and a sink. A component configured but used in
// no pipeline is not an error (the collector allows it too): it is
// reported as unused, and not built.
import type { ComponentKind } from '../core/component.js';
import type { PipelineConfig } from './service-schema.js';

const LIST_OF: Readonly<Record<ComponentKind, 'receivers' | 'processors' | 'exporters'>> = {
  receiver: 'receivers',
  processor: 'processors',
  exporter: 'exporters',
};

export interface GraphCheck {
  readonly problems: string[];
  /** `<kind section>.<id>` of each component configured but used in no pipeline. */
  readonly unused: string[];
}

/** `complete` is false when some pipelines were left out (their shape is invalid): then nothing is reported as unused. */
export function checkGraph(pipelines: Readonly<Record<string, PipelineConfig>>, configured: Readonly<Record<ComponentKind, ReadonlySet<string>>>, complete = true): GraphCheck {
  const problems: string[] = [];
  const used: Record<ComponentKind, Set<string>> = { receiver: new Set(), processor: new Set(), exporter: new Set() };
  const pipelineIds = Object.keys(pipelines);
  if (pipelineIds.length === 0 && complete) problems.push('service.pipelines: must define at least one pipeline');

  for (const [pipelineId, pipeline] of Object.entries(pipelines)) {
    const at = `service.pipelines.${pipelineId}`;
    if (pipeline.receivers.length === 0) problems.push(`${at}.receivers: must list at least one receiver`);
    if (pipeline.exporters.length === 0) problems.push(`${at}.exporters: must list at least one exporter`);
    for (const kind of ['receiver', 'processor', 'exporter'] as const) {
      const list = LIST_OF[kind];
      const seen = new Set<string>();
      pipeline[list].forEach(function checkReference(id, index) {
        if (seen.has(id)) problems.push(`${at}.${list}[${index}]: "${id}" is listed twice`);
        seen.add(id);
        used[kind].add(id);
        if (!configured[kind].has(id)) problems.push(`${at}.${list}[${index}]: references ${kind} "${id}" which is not configured under ${list}`);
      });
    }
  }

  const unused: string[] = [];
  if (pipelineIds.length > 0 && complete) {
    for (const kind of ['receiver', 'processor', 'exporter'] as const) {
      for (const id of configured[kind]) if (!used[kind].has(id)) unused.push(`${LIST_OF[kind]}.${id}`);
    }
  }
  return { problems, unused };
}
