import type { IncomingMessage } from 'node:http';
import { GatewayHttpError } from './http-error.js';

/** Reads the request body, answering 413 as soon as it passes `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise(function read(resolve, reject) {
    const chunks: Buffer[] = [];
    let size = 0;
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Stop buffering but keep reading so the 413 can be written on a live socket.
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    }
    function onError(err: Error): void {
      cleanup();
      reject(err);
    }
    function onClose(): void {
      cleanup();
      reject(new GatewayHttpError(499, 'The client closed the request while sending it.', { code: 'client_closed' }));
    }
    function cleanup(): void {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLarge(limit: number): GatewayHttpError {
  return new GatewayHttpError(413, `Request body is larger than the limit of ${limit} bytes.`, { code: 'request_too_large' });
}
