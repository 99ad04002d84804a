import type { ExporterFactory } from '../../core/component.js';
import { createDefaultConfig, debugConfigSchema, type DebugConfig } from './config.js';
import { createDebugExporter } from './exporter.js';

export const debugExporterFactory: ExporterFactory<DebugConfig> = {
  kind: 'exporter',
  type: 'debug',
  configSchema: debugConfigSchema,
  createDefaultConfig,
  create: createDebugExporter,
};
