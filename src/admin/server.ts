// The admin endpoint: /healthz, /readyz, /metrics and mounted routes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { errorMessage } from '../shared/errors.js';
import { RequestAbortedError } from '../core/http-body.js';
import { DEFAULT_HTTP_LISTENER, listenerFingerprint, type HttpListenerConfig } from '../core/listener/config.js';
import { HttpListener } from '../core/listener/http-listener.js';
import { formatEndpoint, listenEndpoint } from '../core/listener/endpoint.js';
import { listenError } from '../core/listener/listen-error.js';
import type { Telemetry } from '../shared/telemetry.js';
import { type AdminGuard, requireAdminKey } from './auth.js';
import { sendError, sendJson } from './respond.js';
import type { AdminHandler, AdminRoutes } from './routes.js';

export interface AdminServerOptions {
  readonly telemetry: Telemetry;
  readonly logger: Logger;
  readonly isReady: () => boolean;
  readonly apiKey: () => string | undefined;
}

const ORIGIN = 'http://admin.invalid';

/**
 * The request target as a URL. A path is read as a path even when it begins
 * with `//`: resolved against a base, `//x/v1/drains` would be a URL of host
 * `x` and path `/v1/drains`, and serve that route under another path. An
 * absolute URL (`http://host/path`, which proxies send) keeps its own path.
 */
function requestUrl(target: string): URL {
  return target.startsWith('/') ? new URL(`${ORIGIN}${target}`) : new URL(target, ORIGIN);
}

export class AdminServer implements AdminRoutes {
  readonly requireAdminKey: AdminGuard;
  readonly #options: AdminServerOptions;
  readonly #routes = new Map<string, AdminHandler>();
  #listener: HttpListener | undefined;
  #endpoint: string | undefined;
  #fingerprint: string | undefined;

  constructor(options: AdminServerOptions) {
    this.#options = options;
    this.requireAdminKey = requireAdminKey(options.apiKey);
  }

  addRoute(prefix: string, handler: AdminHandler): () => void {
    const normalized = prefix.replace(/\/+$/, '');
    if (this.#routes.has(normalized)) throw new Error(`admin route ${normalized} is already mounted`);
    this.#routes.set(normalized, handler);
    const routes = this.#routes;
    return function removeRoute() {
      if (routes.get(normalized) === handler) routes.delete(normalized);
    };
  }

  /** The configured endpoint this server listens on (undefined when stopped). */
  get endpoint(): string | undefined {
    return this.#endpoint;
  }

  /** The bound address; with port 0 in the endpoint, the port the OS chose. */
  address(): AddressInfo | undefined {
    const address = this.#listener?.address;
    return address === undefined ? undefined : { address: address.host, family: address.host.includes(':') ? 'IPv6' : 'IPv4', port: address.port };
  }

  /** True when listening on this endpoint with these settings (TLS files' content included). */
  listensAs(endpoint: string, limits: HttpListenerConfig): boolean {
    return this.#listener !== undefined && this.#fingerprint === listenerFingerprint(endpoint, limits);
  }

  async listen(endpoint: string, limits: HttpListenerConfig = DEFAULT_HTTP_LISTENER): Promise<void> {
    if (this.#listener !== undefined) throw new Error('admin server is already listening');
    const at = listenEndpoint(endpoint);
    const listener = new HttpListener({
      name: 'admin',
      endpoint: at,
      config: limits,
      telemetry: this.#options.telemetry,
      handler: (req, res) => {
        this.#handle(req, res).catch((err: unknown) => {
          // #handle answers its own failures; this is the last guard, so one request never ends the process.
          this.#options.logger.error({ err: errorMessage(err) }, 'admin request failed');
          res.destroy();
        });
      },
    });
    try {
      await listener.listen();
    } catch (err) {
      throw listenError('service.admin.endpoint', formatEndpoint(at.host, at.port), err);
    }
    this.#listener = listener;
    this.#endpoint = endpoint;
    this.#fingerprint = listenerFingerprint(endpoint, limits);
  }

  /** Closes the listener and every connection on it at once. */
  async close(): Promise<void> {
    const listener = this.#listener;
    if (listener === undefined) return;
    this.#listener = undefined;
    this.#endpoint = undefined;
    this.#fingerprint = undefined;
    listener.destroy();
    await listener.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = requestUrl(req.url ?? '/');
    } catch {
      // Node's parser lets through targets URL cannot read (`http://[/`): the request's fault, answered before any route.
      return sendError(res, 400, 'invalid_request', 'the request target is not a valid URL path');
    }
    try {
      const builtin = this.#builtin(url.pathname);
      if (builtin !== undefined) {
        if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'method_not_allowed', `${req.method ?? ''} is not allowed on ${url.pathname}`, { allow: 'GET, HEAD' });
        return await builtin(res);
      }
      const handler = this.#route(url.pathname);
      if (handler === undefined) return sendError(res, 404, 'not_found', `not found: ${url.pathname}`);
      await handler(req, res, url);
    } catch (err) {
      // A client that left before its body was whole has no answer to read.
      if (err instanceof RequestAbortedError) {
        this.#options.logger.debug({ path: url.pathname }, 'admin request aborted by the client');
        res.destroy();
        return;
      }
      this.#options.logger.error({ err: errorMessage(err), path: url.pathname }, 'admin request failed');
      if (!res.headersSent) sendError(res, 500, 'internal_error', 'internal error');
      else res.destroy();
    }
  }

  #builtin(pathname: string): ((res: ServerResponse) => void | Promise<void>) | undefined {
    const options = this.#options;
    switch (pathname) {
      case '/healthz':
        return function healthz(res) {
          sendJson(res, 200, { status: 'alive' });
        };
      case '/readyz':
        return function readyz(res) {
          const ready = options.isReady();
          sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not ready' });
        };
      case '/metrics':
        return async function metrics(res) {
          const text = await options.telemetry.registry.metrics();
          res.writeHead(200, { 'content-type': options.telemetry.registry.contentType });
          res.end(text);
        };
      default:
        return undefined;
    }
  }

  #route(pathname: string): AdminHandler | undefined {
    // Longest prefix wins, so `/v1/drains/test` can be mounted beside `/v1/drains`.
    let best: { prefix: string; handler: AdminHandler } | undefined;
    for (const [prefix, handler] of this.#routes) {
      const matches = pathname === prefix || pathname.startsWith(`${prefix}/`);
      if (matches && (best === undefined || prefix.length > best.prefix.length)) best = { prefix, handler };
    }
    return best?.handler;
  }
}
