// Every component compiled into sluice. Add one import per component folder
// and list it in register(...) below (top-level sections, like `drains`, with
// registerTopLevelSection).
import { ComponentRegistry } from './core/registry.js';
import { debugExporterFactory } from './exporters/debug/factory.js';
import { type DrainConfig, drainListSchema } from './exporters/drains/config.js';
import { drainsExporterFactory } from './exporters/drains/factory.js';
import { fileExporterFactory } from './exporters/file/factory.js';
import { hasNoPath, NO_PATH_WARNING } from './exporters/otlphttp/config.js';
import { otlphttpExporterFactory } from './exporters/otlphttp/factory.js';
import { resourceProcessorFactory } from './processors/resource/factory.js';
import { samplingProcessorFactory } from './processors/sampling/factory.js';
import { gatewayReceiverFactory } from './receivers/gateway/factory.js';
import { otlpReceiverFactory } from './receivers/otlp/factory.js';

export function builtinRegistry(): ComponentRegistry {
  return new ComponentRegistry().register(
    otlpReceiverFactory,
    gatewayReceiverFactory,
    resourceProcessorFactory,
    debugExporterFactory,
    fileExporterFactory,
    otlphttpExporterFactory,
    samplingProcessorFactory,
    drainsExporterFactory,
  ).registerTopLevelSection({
    key: 'drains',
    schema: drainListSchema,
    whenAbsent: [],
    inject: { kind: 'exporter', type: 'drains', configKey: 'drains' },
    warnings(drains) {
      return (drains as DrainConfig[]).flatMap((drain, i) => (hasNoPath(drain.url) ? [{ path: [i, 'url'], message: NO_PATH_WARNING }] : []));
    },
  });
}
