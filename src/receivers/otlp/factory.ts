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
  create(settings, config, next) {
    return new OtlpReceiver(settings, config, next);
  },
};
