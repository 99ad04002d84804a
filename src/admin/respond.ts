// JSON answers for the admin endpoint.
import type { ServerResponse } from 'node:http';

/**
 * What the admin APIs answer (drains, spend, cluster state) is read with the
 * admin key and is never stored: not in the browser's disk cache after the
 * console's tab closes, not in a proxy.
 */
const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An error in the shape every admin answer takes, `{"error": {"message", "code"}}`; `code` is stable, for programs to branch on. */
export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, code } }, headers);
}
