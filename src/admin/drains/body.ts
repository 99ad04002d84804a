// Reads a JSON request body, bounded in size.
import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, readBody } from '../../core/http-body.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export type BodyResult = { ok: true; value: unknown } | { ok: false; status: 400 | 413; message: string };

export async function readJsonBody(req: IncomingMessage): Promise<BodyResult> {
  let bytes: Buffer;
  try {
    bytes = await readBody(req, 'identity', MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { ok: false, status: 413, message: `body: must be at most ${MAX_BODY_BYTES} bytes` };
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
