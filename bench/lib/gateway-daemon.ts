// `sluice run` for the gateway benchmark: the built-in components plus the
// gateway receiver, which src/components.ts does not register yet (once it
// does, this is the same as dist/src/cli.js). Run as a child process:
//   node dist/bench/lib/gateway-daemon.js <config.yaml>
// Prints "ready" once every component has started; SIGTERM stops it.
import { builtinRegistry } from '../../src/components.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger } from '../../src/core/logger.js';
import { Service } from '../../src/core/service.js';
import { gatewayReceiverFactory } from '../../src/receivers/gateway/factory.js';

const [, , configPath] = process.argv;
if (configPath === undefined) throw new Error('usage: gateway-daemon <config.yaml>');

const registry = builtinRegistry();
if (registry.factory('receiver', 'gateway') === undefined) registry.register(gatewayReceiverFactory);
const config = await loadConfigFile(configPath, { registry });
const service = new Service({ logger: createLogger(), version: 'bench' });
process.once('SIGTERM', function stop() {
  // process.exit (not a signal death) so --cpu-prof writes its profile.
  service.shutdown().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
await service.start(config);
process.stdout.write('ready\n');
