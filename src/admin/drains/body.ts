// Reads a JSON request body, bounded in size.
import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, parseContentEncoding, readBody } from '../../core/http-body.js';
import { MalformedDataError } from '../../shared/errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export type BodyResult = { ok: true; value: unknown } | { ok: false; status: 400 | 413 | 415; message: string };

export async function readJsonBody(req: IncomingMessage): Promise<BodyResult> {
  const tooLarge = { ok: false, status: 413, message: `body: must be at most ${MAX_BODY_BYTES} bytes` } as const;
  const encoding = parseContentEncoding(req.headers['content-encoding']);
  if (encoding === undefined) return { ok: false, status: 415, message: `content-encoding: ${req.headers['content-encoding'] ?? ''} is not supported (gzip, deflate or none)` };
  // A declared length over the limit is refused before any byte is read; compressed bytes count against it too.
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge;
  let bytes: Buffer;
  try {
    bytes = await readBody(req, encoding, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return tooLarge;
    if (err instanceof MalformedDataError) return { ok: false, status: 400, message: `body: ${err.message}` };
    throw err;
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') return { ok: false, status: 400, message: 'body: required (a JSON object)' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, status: 400, message: 'body: must be valid JSON' };
  }
}
