// Bearer admin-key checks in constant time: both sides are hashed first so
// timingSafeEqual always compares equal-length digests and the key's length
// does not leak.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError } from './respond.js';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function bearerMatches(header: string | undefined, apiKey: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  const given = match?.[1]?.trim() ?? '';
  return timingSafeEqual(digest(given), digest(apiKey)) && given.length > 0;
}

export type AdminGuard = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * Returns a guard that answers 401 itself and returns false unless the
 * request carries `Authorization: Bearer <apiKey>`. With no key configured
 * every request is refused: the drains API is never open by accident.
 * `apiKey` may be a function so a reloaded key takes effect at once.
 */
export function requireAdminKey(apiKey: string | undefined | (() => string | undefined)): AdminGuard {
  return function checkAdminKey(req, res) {
    const key = typeof apiKey === 'function' ? apiKey() : apiKey;
    if (key === undefined || key === '') {
      sendError(res, 401, 'admin_api_disabled', 'the admin API is disabled: set service.admin.api_key', { 'www-authenticate': 'Bearer' });
      return false;
    }
    if (!bearerMatches(req.headers.authorization, key)) {
      sendError(res, 401, 'unauthorized', 'missing or wrong admin API key', { 'www-authenticate': 'Bearer' });
      return false;
    }
    return true;
  };
}
