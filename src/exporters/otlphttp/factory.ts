import type { ExporterFactory } from '../../core/component.js';
import { createDefaultConfig, hasNoPath, NO_PATH_WARNING, otlphttpConfigSchema, type OtlpHttpConfig } from './config.js';
import { createOtlpHttpExporter } from './exporter.js';

export const otlphttpExporterFactory: ExporterFactory<OtlpHttpConfig> = {
  kind: 'exporter',
  type: 'otlphttp',
  configSchema: otlphttpConfigSchema,
  createDefaultConfig,
  create: createOtlpHttpExporter,
  warnings(config) {
    return hasNoPath(config.endpoint) ? [{ path: 'endpoint', message: NO_PATH_WARNING }] : [];
  },
};
