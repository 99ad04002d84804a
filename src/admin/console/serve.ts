// Serves the web console at `/` on the admin endpoint: one HTML page and the
// script and stylesheet esbuild bundled into dist/console at build time. No
// file comes from anywhere else, and the Content-Security-Policy says so to
// the browser: no inline script or style, no other origin. The page names its
// assets (and the script the APIs) relative to itself, so it also works behind
// a proxy that serves the admin endpoint under a path (/sluice/).
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { sendError } from '../respond.js';
import type { AdminRoutes } from '../routes.js';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="console/main.css">
<script type="module" src="console/main.js"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Sluice console needs JavaScript.</noscript>
</body>
</html>
`;

const ASSETS: Readonly<Record<string, string>> = {
  '/console/main.js': 'text/javascript; charset=utf-8',
  '/console/main.css': 'text/css; charset=utf-8',
};

// dist/src/admin/console/serve.js -> dist/console/; from the sources (tests), the built copy.
const ASSET_DIRECTORIES = [new URL('../../../console/', import.meta.url), new URL('../../../dist/console/', import.meta.url)];

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

async function readAsset(name: string): Promise<Buffer | undefined> {
  for (const directory of ASSET_DIRECTORIES) {
    try {
      return await readFile(fileURLToPath(new URL(name, directory)));
    } catch {
      // not in this directory; try the next
    }
  }
  return undefined;
}

function send(res: ServerResponse, head: boolean, type: string, body: Buffer | string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(head ? undefined : body);
}

export function mountConsole(routes: AdminRoutes): () => void {
  const cache = new Map<string, Buffer>();
  return routes.addRoute('/', async function serveConsole(req, res, url) {
    const path = url.pathname;
    const isPage = path === '/' || path === '/index.html';
    const type = ASSETS[path];
    if (!isPage && type === undefined) return sendError(res, 404, 'not_found', `not found: ${path}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'method_not_allowed', `${req.method ?? ''} is not allowed on ${path}`, { allow: 'GET, HEAD' });
    const head = req.method === 'HEAD';
    if (isPage) return send(res, head, 'text/html; charset=utf-8', PAGE);
    let body = cache.get(path);
    if (body === undefined) {
      body = await readAsset(path.slice('/console/'.length));
      if (body === undefined) return sendError(res, 503, 'console_not_built', 'the console is not built: run npm run build');
      cache.set(path, body);
    }
    send(res, head, type ?? 'application/octet-stream', body);
  });
}
