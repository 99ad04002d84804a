import type { ExporterFactory } from '../../core/component.js';
import { createDefaultConfig, otlphttpConfigSchema, type OtlpHttpConfig } from './config.js';
import { createOtlpHttpExporter } from './exporter.js';

export const otlphttpExporterFactory: ExporterFactory<OtlpHttpConfig> = {
  kind: 'exporter',
  type: 'otlphttp',
  configSchema: otlphttpConfigSchema,
  createDefaultConfig,
  create: createOtlpHttpExporter,
  warnings(config) {
    // The collector's `endpoint` is a base URL it appends /v1/traces to; here it is the full URL, sent to as written.
    if (new URL(config.endpoint).pathname !== '/') return [];
    return [{ path: 'endpoint', message: 'has no path: traces are POSTed to the root path (/) as written, where the collector would add /v1/traces: write the full URL' }];
  },
};
