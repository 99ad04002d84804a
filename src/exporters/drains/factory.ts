// `drains`: delivers to every drain (DESIGN section 6).
import type { ExporterFactory } from '../../core/component.js';
import { createDefaultConfig, drainsExporterConfigSchema, type DrainsExporterConfig } from './config.js';
import { DrainsExporter } from './exporter.js';

export const drainsExporterFactory: ExporterFactory<DrainsExporterConfig> = {
  kind: 'exporter',
  type: 'drains',
  configSchema: drainsExporterConfigSchema,
  createDefaultConfig,
  create(settings, config) {
    return new DrainsExporter(settings, config);
  },
};
