// The HTTP semantic conventions' attributes of a request's SERVER span that
// the request line and headers give.
import type { IncomingMessage } from 'node:http';
import type { SpanRecord } from './spans.js';

/** RFC 9110's methods and PATCH (RFC 5789): the conventions' "known" methods; any other is `_OTHER`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/**
 * Query keys whose values are redacted: those the conventions name (signed
 * URLs' credentials), and the names API keys and tokens go by in a query
 * (Gemini's `?key=`), which a client may send though this gateway reads
 * keys from headers only: secrets are never recorded. Matched as a server
 * reads them: in any case, percent-decoded.
 */
const REDACTED_QUERY_KEYS: ReadonlySet<string> = new Set(['awsaccesskeyid', 'signature', 'sig', 'x-goog-signature', 'key', 'api_key', 'apikey', 'api-key', 'token', 'access_token']);

/** The span's name: method and route, and `HTTP` for a method the conventions do not know, so a client cannot mint span names. */
export function serverSpanName(method: string, route: string | undefined): string {
  const named = KNOWN_METHODS.has(method) ? method : 'HTTP';
  return route === undefined ? named : `${named} ${route}`;
}

export function recordHttpRequest(server: SpanRecord, req: IncomingMessage, method: string, path: string, query: string | undefined): void {
  const known = KNOWN_METHODS.has(method) ? method : '_OTHER';
  server.str('http.request.method', known);
  if (known !== method) server.str('http.request.method_original', method);
  server.str('url.path', path).str('url.scheme', (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http');
  if (query !== undefined) server.str('url.query', redactQuery(query));
  // HTTP/2 is "2", not Node's "2.0".
  server.str('network.protocol.version', req.httpVersionMajor >= 2 ? String(req.httpVersionMajor) : req.httpVersion);
  const agent = req.headers['user-agent'];
  if (agent !== undefined) server.str('user_agent.original', agent);
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const at = pair.indexOf('=');
      return at !== -1 && REDACTED_QUERY_KEYS.has(queryKey(pair.slice(0, at))) ? `${pair.slice(0, at)}=REDACTED` : pair;
    })
    .join('&');
}

/** A query key as a server reads it (percent-decoded), lower-cased: `Key` and `k%65y` are `key`. */
function queryKey(raw: string): string {
  try {
    return decodeURIComponent(raw).toLowerCase();
  } catch {
    return raw.toLowerCase(); // not valid percent-encoding
  }
}
