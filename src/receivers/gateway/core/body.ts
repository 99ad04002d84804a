import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, readBody as readLimitedBody, RequestAbortedError } from '../../../core/http-body.js';
import { GatewayHttpError } from './http-error.js';

/** Reads the request body, answering 413 as soon as it passes `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  try {
    return await readLimitedBody(req, 'identity', limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      // Stop buffering but keep reading so the 413 can be written on a live socket.
      req.resume();
      throw tooLarge(limit);
    }
    if (err instanceof RequestAbortedError) throw new GatewayHttpError(499, 'The client closed the request while sending it.', { code: 'client_closed' });
    throw err;
  }
}

function tooLarge(limit: number): GatewayHttpError {
  return new GatewayHttpError(413, `Request body is larger than the limit of ${limit} bytes.`, { code: 'request_too_large' });
}
