import type { ExporterFactory } from '../../core/component.js';
import { createDefaultConfig, otlphttpConfigSchema, type OtlpHttpConfig } from './config.js';
import { createOtlpHttpExporter } from './exporter.js';

export const otlphttpExporterFactory: ExporterFactory<OtlpHttpConfig> = {
  kind: 'exporter',
  type: 'otlphttp',
  configSchema: otlphttpConfigSchema,
  createDefaultConfig,
  create: createOtlpHttpExporter,
};
