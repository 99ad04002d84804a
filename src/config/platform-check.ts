// Every span leaving through any exporter carries platform.projectId and
// platform.deploymentId on its resource, set by a resource processor
// (DESIGN section 5). A pipeline without one that sets both still runs, as
// the collector would run it, but `validate` and `run` warn about it.
import type { ComponentConfig, ProcessorFactory } from '../core/component.js';
import type { PipelineConfig } from './service-schema.js';

const PLATFORM_KEYS = ['platform.projectId', 'platform.deploymentId'] as const;

export const UNSTAMPED_WARNING = `no resource processor sets ${PLATFORM_KEYS.join(' and ')}: its spans leave without them`;

/** The ids of pipelines whose processors, in order, leave either platform attribute unset. */
export function unstampedPipelines(pipelines: Readonly<Record<string, PipelineConfig>>, processors: ReadonlyMap<string, ComponentConfig<ProcessorFactory>>): string[] {
  return Object.entries(pipelines)
    .filter(([, pipeline]) => !setsPlatformKeys(pipeline.processors, processors))
    .map(([id]) => id);
}

function setsPlatformKeys(ids: readonly string[], processors: ReadonlyMap<string, ComponentConfig<ProcessorFactory>>): boolean {
  const set = new Set<string>();
  for (const id of ids) {
    const entry = processors.get(id);
    for (const { key, sets } of entry?.factory.resourceStamps?.(entry.config) ?? []) {
      if (sets) set.add(key);
      else set.delete(key);
    }
  }
  return PLATFORM_KEYS.every((key) => set.has(key));
}
