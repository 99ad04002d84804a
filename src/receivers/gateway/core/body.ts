import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, parseContentEncoding, readBody as readLimitedBody, RequestAbortedError } from '../../../core/http-body.js';
import { MalformedDataError } from '../../../shared/errors.js';
import { GatewayHttpError } from './http-error.js';

/**
 * Reads the request body, answering 413 as soon as it passes `limit` bytes.
 * A gzip or deflate body is inflated, the limit applying to the inflated bytes
 * (inflation stops once past it); another Content-Encoding is a 415.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = parseContentEncoding(req.headers['content-encoding']);
  if (encoding === undefined) {
    throw new GatewayHttpError(415, `Content-Encoding ${req.headers['content-encoding'] ?? ''} is not supported; send gzip, deflate or none.`, { code: 'unsupported_content_encoding' });
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  try {
    return await readLimitedBody(req, encoding, limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      // Stop buffering but keep reading so the 413 can be written on a live socket.
      req.resume();
      throw tooLarge(limit);
    }
    if (err instanceof MalformedDataError) {
      req.resume();
      throw new GatewayHttpError(400, `The request body could not be decoded: ${err.message}.`, { code: 'invalid_body' });
    }
    if (err instanceof RequestAbortedError) throw new GatewayHttpError(499, 'The client closed the request while sending it.', { code: 'client_closed' });
    throw err;
  }
}

function tooLarge(limit: number): GatewayHttpError {
  return new GatewayHttpError(413, `Request body is larger than the limit of ${limit} bytes.`, { code: 'request_too_large' });
}
