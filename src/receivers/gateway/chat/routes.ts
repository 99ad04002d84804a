// The OpenAI-shaped routes: chat completions and the model catalog.
import { GatewayHttpError, sendJson } from '../core/http-error.js';
import type { ProtocolRoute } from '../core/protocol.js';
import { chatErrors } from './answer.js';
import { handleChat } from './handler.js';

const MODELS_PREFIX = '/v1/models/';

export const chatRoutes: readonly ProtocolRoute[] = [
  { route: '/v1/chat/completions', method: 'POST', path: '/v1/chat/completions', errors: chatErrors, generates: true, handle: handleChat },
  {
    route: '/v1/models',
    method: 'GET',
    path: '/v1/models',
    errors: chatErrors,
    handle: function listModels(services, request) {
      sendJson(request.res, 200, services.catalog.listJson);
    },
  },
  {
    route: '/v1/models/{id}',
    method: 'GET',
    path: MODELS_PREFIX,
    prefix: true,
    errors: chatErrors,
    handle: function getModel(services, request) {
      const id = decodedPathPart(request.path.slice(MODELS_PREFIX.length));
      request.server.str('sluice.model', id);
      const record = services.catalog.recordJson(id);
      if (record === undefined) throw new GatewayHttpError(404, `The model \`${id}\` does not exist.`, { code: 'model_not_found', param: 'model' });
      sendJson(request.res, 200, record);
    },
  },
];

/** A path segment percent-decoded; malformed escapes (`%E0`) are the request's fault, not a 500. */
function decodedPathPart(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new GatewayHttpError(400, `The model id \`${encoded}\` in the path is not valid percent-encoding.`, { code: 'invalid_value', param: 'model' });
  }
}
