// `sampling/*`: the drains' rule engine as a pipeline processor.
import type { ProcessorFactory } from '../../core/component.js';
import { createDefaultConfig, samplingConfigSchema, type SamplingConfig } from './config.js';
import { createSamplingProcessor } from './processor.js';

export const samplingProcessorFactory: ProcessorFactory<SamplingConfig> = {
  kind: 'processor',
  type: 'sampling',
  configSchema: samplingConfigSchema,
  createDefaultConfig,
  create(settings, config) {
    return createSamplingProcessor(settings.id, config, settings.telemetry);
  },
};
