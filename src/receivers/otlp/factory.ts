// The otlp receiver as data: type, schema, defaults, create.
import type { CreateSettings, ReceiverFactory, TracesConsumer } from '../../core/component.js';
import { configSchema, createDefaultConfig, type OtlpReceiverConfig } from './config.js';
import { OtlpReceiver } from './receiver.js';

export interface OtlpReceiverFactory extends ReceiverFactory<OtlpReceiverConfig> {
  create(settings: CreateSettings, config: OtlpReceiverConfig, next: TracesConsumer): OtlpReceiver;
}

export const otlpReceiverFactory: OtlpReceiverFactory = {
  kind: 'receiver',
  type: 'otlp',
  configSchema,
  createDefaultConfig,
  listens(config) {
    const addresses = [];
    if (config.protocols.http !== undefined) addresses.push({ path: 'protocols.http.endpoint', ...config.protocols.http.endpoint });
    if (config.protocols.grpc !== undefined) addresses.push({ path: 'protocols.grpc.endpoint', ...config.protocols.grpc.endpoint });
    return addresses;
  },
  clientKeys(config) {
    return (config.auth?.api_keys ?? []).map((key, i) => ({ path: `auth.api_keys[${i}]`, key }));
  },
  create(settings, config, next) {
    return new OtlpReceiver(settings, config, next);
  },
};
