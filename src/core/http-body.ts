// Reads an HTTP request body under a byte limit that holds before and after
// decompression: the limit is checked on every chunk, so an oversized body
// (or a gzip bomb) is abandoned as soon as it passes the limit, with at most
// one zlib output chunk in memory beyond it.
import type { IncomingMessage } from 'node:http';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';
import { MalformedDataError } from '../shared/errors.js';

/** The body passed the limit (raw or decompressed). */
export class BodyTooLargeError extends Error {
  readonly limit: number;

  constructor(limit: number) {
    super(`request body exceeds max_request_body_size (${limit} bytes)`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

export type ContentEncoding = 'identity' | 'gzip' | 'deflate';

/** The request stopped before its body was complete (client gone). */
export class RequestAbortedError extends Error {
  constructor() {
    super('the client aborted the request');
    this.name = 'RequestAbortedError';
  }
}

/** undefined for an encoding this receiver does not decode. */
export function parseContentEncoding(header: string | undefined): ContentEncoding | undefined {
  if (header === undefined) return 'identity';
  const value = header.trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  if (value === 'deflate') return 'deflate';
  return undefined;
}

function join(chunks: Buffer[], total: number): Buffer {
  // One chunk is used as is: no copy for the common small request.
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  return Buffer.concat(chunks, total);
}

export function readBody(req: IncomingMessage, encoding: ContentEncoding, limit: number): Promise<Buffer> {
  return encoding === 'identity' ? readPlain(req, limit) : readCompressed(req, encoding, limit);
}

function readPlain(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise(function collect(resolve, reject) {
    const chunks: Buffer[] = [];
    let total = 0;
    function onData(chunk: Buffer): void {
      total += chunk.length;
      if (total > limit) {
        cleanup();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      cleanup();
      resolve(join(chunks, total));
    }
    function onAborted(): void {
      if (req.complete) return;
      cleanup();
      reject(new RequestAbortedError());
    }
    function cleanup(): void {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAborted);
      req.off('close', onAborted);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAborted);
    req.on('close', onAborted);
  });
}

function readCompressed(req: IncomingMessage, encoding: 'gzip' | 'deflate', limit: number): Promise<Buffer> {
  return new Promise(function inflate(resolve, reject) {
    const inflater: Gunzip | Inflate = encoding === 'gzip' ? createGunzip() : createInflate();
    const chunks: Buffer[] = [];
    let total = 0;
    let raw = 0;
    let settled = false;
    function fail(err: Error): void {
      if (settled) return;
      settled = true;
      req.unpipe(inflater);
      req.off('data', onRawData);
      inflater.destroy();
      reject(err);
    }
    function onRawData(chunk: Buffer): void {
      raw += chunk.length;
      if (raw > limit) fail(new BodyTooLargeError(limit));
    }
    function onData(chunk: Buffer): void {
      total += chunk.length;
      if (total > limit) {
        fail(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      if (settled) return;
      settled = true;
      req.off('data', onRawData);
      resolve(join(chunks, total));
    }
    function onInflateError(err: Error): void {
      fail(new MalformedDataError(`invalid ${encoding} body: ${err.message}`));
    }
    function onAborted(): void {
      if (!req.complete) fail(new RequestAbortedError());
    }
    req.on('data', onRawData);
    req.on('close', onAborted);
    req.on('error', onAborted);
    inflater.on('data', onData);
    inflater.on('end', onEnd);
    inflater.on('error', onInflateError);
    req.pipe(inflater);
  });
}
