import type { ReceiverFactory } from '../../core/component.js';
import { createDefaultConfig, gatewayConfigSchema, type GatewayConfig } from './config.js';
import { GatewayReceiver } from './receiver.js';

export const gatewayReceiverFactory: ReceiverFactory<GatewayConfig> = {
  kind: 'receiver',
  type: 'gateway',
  configSchema: gatewayConfigSchema,
  createDefaultConfig,
  create: function createGatewayReceiver(settings, config, next) {
    return new GatewayReceiver(settings, config, next);
  },
};
