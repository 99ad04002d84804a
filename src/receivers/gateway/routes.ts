// Every route the gateway serves, one list per client protocol folder.
// Adding a protocol is a folder and one line here.
import { aiSdkRoutes } from './aisdk/routes.js';
import { chatRoutes } from './chat/routes.js';
import { embeddingsRoutes } from './embeddings/routes.js';
import type { ProtocolRoute } from './core/protocol.js';
import { messagesRoutes } from './messages/routes.js';
import { usageRoutes } from './usage/routes.js';

export const gatewayRoutes: readonly ProtocolRoute[] = [...chatRoutes, ...messagesRoutes, ...embeddingsRoutes, ...aiSdkRoutes, ...usageRoutes];
