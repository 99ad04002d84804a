import type { AddressInfo } from 'node:net';
import type { CreateSettings, Host, Receiver, ReceiverFactory, TracesConsumer } from '../../core/component.js';
import { checkKeyNamesTogether, createDefaultConfig, gatewayConfigSchema, type GatewayConfig } from './config.js';
import { listenEndpoint } from '../../core/listener/endpoint.js';
import type { GatewayReceiver } from './receiver.js';

/**
 * The receiver and its provider adapters (SigV4, event-stream codecs, ...)
 * load when it starts, so a config without a gateway never pays for them.
 */
export class LazyGatewayReceiver implements Receiver {
  #inner: GatewayReceiver | undefined;
  readonly #create: () => Promise<GatewayReceiver>;

  constructor(settings: CreateSettings, config: GatewayConfig, next: TracesConsumer) {
    this.#create = async function loadGateway() {
      const { GatewayReceiver: Implementation } = await import('./receiver.js');
      return new Implementation(settings, config, next);
    };
  }

  /** The bound address (for tests that listen on port 0). */
  get address(): AddressInfo | undefined {
    return this.#inner?.address;
  }

  async start(host: Host): Promise<void> {
    this.#inner ??= await this.#create();
    await this.#inner.start(host);
  }

  async shutdown(): Promise<void> {
    await this.#inner?.shutdown();
  }
}

export const gatewayReceiverFactory: ReceiverFactory<GatewayConfig> = {
  kind: 'receiver',
  type: 'gateway',
  configSchema: gatewayConfigSchema,
  createDefaultConfig,
  checkTogether: checkKeyNamesTogether,
  listens(config) {
    return [{ path: 'endpoint', ...listenEndpoint(config.endpoint) }];
  },
  clientKeys(config) {
    return config.api_keys.map((entry, i) => ({ path: `api_keys[${i}]`, key: typeof entry === 'string' ? entry : entry.key }));
  },
  create: function createGatewayReceiver(settings, config, next) {
    return new LazyGatewayReceiver(settings, config, next);
  },
};
