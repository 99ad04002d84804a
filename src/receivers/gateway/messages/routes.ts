// Anthropic's Messages API: POST /v1/messages and /v1/messages/count_tokens,
// keys in x-api-key (what the Anthropic SDK and Claude Code send) or
// Authorization: Bearer, errors in Anthropic's shape.
import type { IncomingMessage } from 'node:http';
import { bearerKey } from '../core/auth.js';
import type { ProtocolRoute } from '../core/protocol.js';
import { handleCountTokens } from './count-tokens.js';
import { messagesErrors } from './errors.js';
import { handleMessages } from './handler.js';

function presentedKey(req: IncomingMessage): string | undefined {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return key;
  return bearerKey(req);
}

export const messagesRoutes: readonly ProtocolRoute[] = [
  { route: '/v1/messages', method: 'POST', path: '/v1/messages', errors: messagesErrors, presentedKey, generates: true, handle: handleMessages },
  { route: '/v1/messages/count_tokens', method: 'POST', path: '/v1/messages/count_tokens', errors: messagesErrors, presentedKey, handle: handleCountTokens },
];
