// CORS for the OTLP HTTP receiver and the gateway, as the collector's
// confighttp does it: allowed origins may hold `*` wildcards
// (`https://*.example.com`, or `*` alone for any origin); a preflight is
// answered here, before routing and authentication, since browsers send it
// without credentials. Credentials are allowed, as the collector allows them:
// `navigator.sendBeacon` (what the OTel web exporter sent with when it had no
// headers to send, before its fetch transport) always includes them, and a
// browser refuses such a request's preflight without
// `Access-Control-Allow-Credentials: true`. The origin is echoed, never `*`,
// which browsers refuse with credentials.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsConfig } from './config.js';

/** Always allowed request headers, beyond the configured ones. */
const BASE_HEADERS = ['accept', 'authorization', 'content-type', 'content-encoding', 'x-requested-with', 'traceparent', 'tracestate'];

function originPattern(allowed: string): RegExp {
  // Elsewhere a `*` stands for part of a host; alone it is any origin, slashes included.
  if (allowed === '*') return /^/;
  const escaped = allowed
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${escaped}$`, 'i');
}

export class CorsPolicy {
  readonly #patterns: readonly RegExp[];
  readonly #anyHeader: boolean;
  readonly #allowHeaders: string;
  readonly #allowMethods: string;
  readonly #maxAge: string | undefined;
  readonly #exposeHeaders: string | undefined;

  /** `methods`: what the endpoint serves (`POST`); `expose`: response headers scripts may read. */
  constructor(config: CorsConfig, methods: readonly string[], expose: readonly string[] = []) {
    this.#patterns = config.allowed_origins.map(originPattern);
    this.#anyHeader = config.allowed_headers.includes('*');
    this.#allowHeaders = [...new Set([...BASE_HEADERS, ...config.allowed_headers.filter((h) => h !== '*').map((h) => h.toLowerCase())])].join(', ');
    this.#allowMethods = methods.join(', ');
    this.#maxAge = config.max_age === undefined ? undefined : String(Math.floor(config.max_age / 1000));
    this.#exposeHeaders = expose.length === 0 ? undefined : expose.join(', ');
  }

  #allowedOrigin(req: IncomingMessage): string | undefined {
    const origin = req.headers.origin;
    if (origin === undefined || origin === '') return undefined;
    return this.#patterns.some((pattern) => pattern.test(origin)) ? origin : undefined;
  }

  /**
   * Answers a preflight (OPTIONS with Access-Control-Request-Method) and
   * returns true; else adds the CORS headers an allowed origin needs to the
   * response and returns false.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = this.#allowedOrigin(req);
    res.setHeader('Vary', 'Origin');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      if (origin !== undefined) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
        res.setHeader('Access-Control-Allow-Methods', this.#allowMethods);
        const requested = req.headers['access-control-request-headers'];
        res.setHeader('Access-Control-Allow-Headers', this.#anyHeader && requested !== undefined ? requested : this.#allowHeaders);
        if (this.#maxAge !== undefined) res.setHeader('Access-Control-Max-Age', this.#maxAge);
      }
      // A refused origin gets no CORS headers: the browser blocks the request.
      res.writeHead(204, { 'Content-Length': 0 });
      res.end();
      return true;
    }
    if (origin !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (this.#exposeHeaders !== undefined) res.setHeader('Access-Control-Expose-Headers', this.#exposeHeaders);
    }
    return false;
  }
}
