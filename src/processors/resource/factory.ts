import type { ProcessorFactory, ResourceStamp } from '../../core/component.js';
import { createDefaultConfig, resourceConfigSchema, type ResourceConfig } from './config.js';
import { createResourceProcessor } from './processor.js';

export const resourceProcessorFactory: ProcessorFactory<ResourceConfig> = {
  kind: 'processor',
  type: 'resource',
  configSchema: resourceConfigSchema,
  createDefaultConfig,
  create: (_settings, config) => createResourceProcessor(config),
  resourceStamps: stampsOf,
};

/** The platform check's view of the actions: an empty value (a variable set to nothing) stamps no id anyone can use, so it unsets the key where it would write it. */
function stampsOf(config: ResourceConfig): ResourceStamp[] {
  const stamps: ResourceStamp[] = [];
  for (const { key, value, action } of config.actions) {
    const usable = value !== '';
    if (action === 'delete' || (!usable && (action === 'upsert' || action === 'update'))) stamps.push({ key, sets: false });
    else if (usable && (action === 'insert' || action === 'upsert')) stamps.push({ key, sets: true });
  }
  return stamps;
}
