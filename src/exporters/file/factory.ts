import type { ExporterFactory } from '../../core/component.js';
import { createDefaultConfig, fileConfigSchema, type FileConfig } from './config.js';
import { createFileExporter } from './exporter.js';

export const fileExporterFactory: ExporterFactory<FileConfig> = {
  kind: 'exporter',
  type: 'file',
  configSchema: fileConfigSchema,
  createDefaultConfig,
  create: createFileExporter,
};
