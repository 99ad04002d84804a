import type { ProcessorFactory } from '../../core/component.js';
import { createDefaultConfig, resourceConfigSchema, type ResourceConfig } from './config.js';
import { createResourceProcessor } from './processor.js';

export const resourceProcessorFactory: ProcessorFactory<ResourceConfig> = {
  kind: 'processor',
  type: 'resource',
  configSchema: resourceConfigSchema,
  createDefaultConfig,
  create: (_settings, config) => createResourceProcessor(config),
};
