// Builds a drains exporter the way the service does, on a temporary storage directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { deepMerge } from '../../../src/config/merge.js';
import type { CreateSettings, Host } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { createDefaultConfig, drainListSchema, drainsExporterConfigSchema, type DrainsExporterConfig } from '../../../src/exporters/drains/config.js';
import { DrainsExporter } from '../../../src/exporters/drains/exporter.js';
import { testHost } from '../../helpers/host.js';

export interface Harness {
  readonly exporter: DrainsExporter;
  readonly telemetry: Telemetry;
  readonly host: Host;
  readonly storageDirectory: string;
}

export function exporterConfig(drains: unknown[], overrides: Record<string, unknown> = {}): DrainsExporterConfig {
  const list = drainListSchema.parse(drains);
  return drainsExporterConfigSchema.parse({ ...(deepMerge(createDefaultConfig(), overrides) as object), drains: list });
}

export function makeHarness(config: DrainsExporterConfig, storageDirectory = mkdtempSync(join(tmpdir(), 'sluice-drains-')), telemetry = new Telemetry({ defaultMetrics: false })): Harness {
  const logger = pino({ level: 'silent' });
  const host: Host = testHost({ logger, telemetry, storageDirectory, version: '0.1.0-test' });
  const settings: CreateSettings = { id: 'drains', logger, telemetry, storageDirectory, version: '0.1.0-test' };
  return { exporter: new DrainsExporter(settings, config), telemetry, host, storageDirectory };
}
