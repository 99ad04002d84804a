// JSON answers for the admin endpoint.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What the admin APIs answer (drains, spend, cluster state) is read with the
 * admin key and is never stored: not in the browser's disk cache after the
 * console's tab closes, not in a proxy.
 */
const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  const close = leavesBodyUnread(res.req) ? { connection: 'close' } : {};
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text), ...close, ...headers });
  res.end(text);
}

/**
 * Whether the answer goes before a body the request announced has been read
 * (a 401 or a declared size's 413): Node would read and drop the rest to
 * reuse the connection, as much as the client cares to send; closing it
 * bounds that, as the receivers do. A bodiless request is not complete yet
 * either while its handler runs, so it is told apart by its headers.
 */
function leavesBodyUnread(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** An error in the shape every admin answer takes, `{"error": {"message", "code"}}`; `code` is stable, for programs to branch on. */
export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, code } }, headers);
}
